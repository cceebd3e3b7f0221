package fjord.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Transaction scenarios beyond produce/commit/abort. With kafka-clients 4.x against a cluster that
 * finalizes transaction.version=2 they run transactions V2 (no AddPartitionsToTxn/AddOffsetsToTxn,
 * an epoch bump per commit or abort); with 4.1 against one that does not, V1. Only the public
 * client API is used, so the program compiles against both.
 */
final class TxnScenarios {
  private TxnScenarios() {}

  /**
   * Consume-transform-produce: six input records read with a group id, three outputs and the
   * input offset 3 committed in one transaction (sendOffsetsToTransaction), three more aborted
   * with offset 6; then a second producer with the same transactional.id fences the first.
   */
  static Map<String, Object> consumeTransformProduce(Scenarios s) throws Exception {
    String in = s.topic;
    String out = s.topic + "-out";
    String groupId = s.topic + "-group";
    try (Admin admin = s.admin()) {
      Scenarios.createTopic(admin, new NewTopic(in, 1, (short) 1));
      Scenarios.createTopic(admin, new NewTopic(out, 1, (short) 1));
    }
    try (KafkaProducer<String, String> p = s.producer(new Properties())) {
      for (int i = 0; i < 6; i++) p.send(new ProducerRecord<>(in, 0, "k" + i, "in" + i));
      p.flush();
    }
    Map<String, Object> result = new LinkedHashMap<>();
    Properties cp = new Properties();
    cp.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    Properties pp = new Properties();
    pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, s.topic + "-txn");
    pp.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "30000");
    TopicPartition inTp = new TopicPartition(in, 0);
    try (KafkaConsumer<String, String> c = s.consumer(cp); KafkaProducer<String, String> p = s.producer(pp)) {
      c.assign(List.of(inTp));
      c.seekToBeginning(List.of(inTp));
      List<ConsumerRecord<String, String>> input = new ArrayList<>();
      long deadline = System.currentTimeMillis() + 30_000;
      while (input.size() < 6 && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) input.add(r);
      }
      result.put("inputRead", input.size());
      p.initTransactions();
      for (int t = 0; t < 2; t++) {
        p.beginTransaction();
        for (ConsumerRecord<String, String> r : input.subList(t * 3, t * 3 + 3)) p.send(new ProducerRecord<>(out, 0, r.key(), r.value().replace("in", "out")));
        p.sendOffsetsToTransaction(Map.of(inTp, new OffsetAndMetadata(t * 3 + 3)), c.groupMetadata());
        if (t == 0) p.commitTransaction();
        else {
          p.flush();
          p.abortTransaction();
        }
      }
      try (KafkaProducer<String, String> zombieKiller = s.producer(pp)) {
        zombieKiller.initTransactions();
        String fenced = "NONE";
        try {
          p.beginTransaction();
          p.send(new ProducerRecord<>(out, 0, "z", "zombie")).get();
          p.commitTransaction();
        } catch (Exception e) {
          Throwable cause = e.getCause() != null && e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
          fenced = cause.getClass().getSimpleName();
        }
        result.put("oldProducerAfterFence", fenced);
      }
    }
    try (Admin admin = s.admin()) {
      OffsetAndMetadata committed = admin.listConsumerGroupOffsets(groupId).partitionsToOffsetAndMetadata().get().get(inTp);
      result.put("committed", committed == null ? null : committed.offset());
    }
    Properties rc = new Properties();
    rc.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    try (KafkaConsumer<String, String> c = s.consumer(rc)) {
      List<String> seen = new ArrayList<>();
      for (Map<String, Object> r : Scenarios.readAll(c, Scenarios.partitions(out, 1))) seen.add(r.get("offset") + ":" + r.get("value"));
      result.put("outputCommitted", seen);
    }
    return result;
  }
}
