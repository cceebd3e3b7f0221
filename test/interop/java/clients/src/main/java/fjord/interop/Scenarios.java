package fjord.interop;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Named client scenarios run against any bootstrap address. Each prints one JSON object (the facts a
 * client can observe: offsets, records, error class names, configs, assignments) as its last stdout
 * line, so the same scenario can be compared between Apache Kafka and Fjord.
 *
 * Usage: Scenarios NAME bootstrap=HOST:PORT topic=T [key=value ...]
 */
public final class Scenarios {
  private final Map<String, String> opts;
  private final String bootstrap;
  final String topic;

  private Scenarios(Map<String, String> opts) {
    this.opts = opts;
    this.bootstrap = require("bootstrap");
    this.topic = opts.getOrDefault("topic", "interop-java");
  }

  public static void main(String[] args) {
    if (args.length < 1) {
      System.err.println("usage: Scenarios NAME bootstrap=HOST:PORT [key=value ...]");
      System.exit(2);
    }
    Map<String, String> opts = new HashMap<>();
    for (int i = 1; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      if (eq < 0) throw new IllegalArgumentException("expected key=value: " + args[i]);
      opts.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    Map<String, Object> out;
    int code = 0;
    try {
      Scenarios s = new Scenarios(opts);
      switch (args[0]) {
        case "cluster": out = s.cluster(); break;
        case "produce": out = s.produce(); break;
        case "transactions": out = s.transactions(); break;
        case "transactions-offsets": out = TxnScenarios.consumeTransformProduce(s); break;
        case "group": out = s.group(); break;
        case "admin": out = s.adminScenario(); break;
        default: throw new IllegalArgumentException("unknown scenario " + args[0]);
      }
    } catch (Exception e) {
      Throwable t = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
      out = new LinkedHashMap<>();
      out.put("error", t.getClass().getSimpleName());
      out.put("message", String.valueOf(t.getMessage()));
      code = 1;
    }
    System.out.println(Json.write(out));
    System.out.flush();
    // Client threads (metadata refresh, heartbeats) must not keep the JVM alive after a failure.
    Runtime.getRuntime().halt(code);
  }

  private String require(String key) {
    String v = opts.get(key);
    if (v == null) throw new IllegalArgumentException("missing option " + key);
    return v;
  }

  private int intOpt(String key, int dflt) {
    return Integer.parseInt(opts.getOrDefault(key, Integer.toString(dflt)));
  }

  /** Settings that make every client give up in seconds instead of minutes when the node misbehaves. */
  private Properties base() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    p.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "1000");
    p.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "3000");
    return p;
  }

  Admin admin() {
    return Admin.create(base());
  }

  KafkaProducer<String, String> producer(Properties extra) {
    Properties p = base();
    p.remove(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.putAll(extra);
    return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
  }

  KafkaConsumer<String, String> consumer(Properties extra) {
    Properties p = base();
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.putAll(extra);
    return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
  }

  static void createTopic(Admin admin, NewTopic t) throws Exception {
    try {
      admin.createTopics(List.of(t)).all().get();
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) throw e;
    }
  }

  private static String errorOf(Future<?> f) {
    try {
      f.get();
      return "NONE";
    } catch (ExecutionException e) {
      return e.getCause().getClass().getSimpleName();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "InterruptedException";
    }
  }

  static List<TopicPartition> partitions(String topic, int n) {
    List<TopicPartition> tps = new ArrayList<>();
    for (int i = 0; i < n; i++) tps.add(new TopicPartition(topic, i));
    return tps;
  }

  private static void awaitEndOffsets(KafkaConsumer<String, String> c, Collection<TopicPartition> tps, long total)
      throws InterruptedException {
    long deadline = System.currentTimeMillis() + 30_000;
    while (c.endOffsets(tps).values().stream().mapToLong(Long::longValue).sum() < total) {
      if (System.currentTimeMillis() > deadline) return;
      Thread.sleep(50);
    }
  }

  /** Reads the assigned partitions from the beginning until each position reaches its end offset. */
  static List<Map<String, Object>> readAll(KafkaConsumer<String, String> c, Collection<TopicPartition> tps)
      throws Exception {
    c.assign(tps);
    c.seekToBeginning(tps);
    Map<TopicPartition, Long> end = c.endOffsets(tps);
    List<Map<String, Object>> records = new ArrayList<>();
    long deadline = System.currentTimeMillis() + 30_000;
    while (true) {
      boolean done = true;
      for (TopicPartition tp : tps) if (c.position(tp) < end.get(tp)) done = false;
      if (done) break;
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("timed out reading " + tps);
      for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("partition", r.partition());
        m.put("offset", r.offset());
        m.put("key", r.key());
        m.put("value", r.value());
        m.put("timestamp", r.timestamp());
        m.put("timestampType", r.timestampType().name);
        List<String> headers = new ArrayList<>();
        for (Header h : r.headers()) headers.add(h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8));
        m.put("headers", headers);
        records.add(m);
      }
    }
    records.sort((a, b) -> {
      int p = Integer.compare((Integer) a.get("partition"), (Integer) b.get("partition"));
      return p != 0 ? p : Long.compare((Long) a.get("offset"), (Long) b.get("offset"));
    });
    return records;
  }

  private Map<String, Object> cluster() throws Exception {
    try (Admin admin = admin()) {
      DescribeClusterResult r = admin.describeCluster();
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("nodes", r.nodes().get().size());
      out.put("hasClusterId", r.clusterId().get() != null);
      out.put("hasController", r.controller().get() != null);
      return out;
    }
  }

  private Map<String, Object> produce() throws Exception {
    int count = intOpt("count", 30);
    Properties pp = new Properties();
    pp.put(ProducerConfig.ACKS_CONFIG, opts.getOrDefault("acks", "all"));
    pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, opts.getOrDefault("compression", "none"));
    pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, opts.getOrDefault("idempotent", "false"));
    try (Admin admin = admin()) {
      createTopic(admin, new NewTopic(topic, 3, (short) 1));
    }
    List<String> produced = new ArrayList<>();
    try (KafkaProducer<String, String> p = producer(pp)) {
      List<Future<RecordMetadata>> futures = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        ProducerRecord<String, String> r = new ProducerRecord<>(topic, i % 3, 1_700_000_000_000L + i, "k" + i,
            ("value-" + i + "-").repeat(8));
        r.headers().add("i", Integer.toString(i).getBytes(StandardCharsets.UTF_8));
        futures.add(p.send(r));
      }
      p.flush();
      for (Future<RecordMetadata> f : futures) {
        RecordMetadata md = f.get();
        produced.add(md.partition() + ":" + md.offset());
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("produced", produced);
    try (KafkaConsumer<String, String> c = consumer(new Properties())) {
      // acks=0: flush() returns once the requests are written to the socket, before the broker has
      // appended them; wait (bounded) for the end offsets to count every record before reading.
      if ("0".equals(opts.get("acks"))) awaitEndOffsets(c, partitions(topic, 3), count);
      out.put("consumed", readAll(c, partitions(topic, 3)));
    }
    return out;
  }

  private Map<String, Object> transactions() throws Exception {
    try (Admin admin = admin()) {
      createTopic(admin, new NewTopic(topic, 1, (short) 1));
    }
    Properties pp = new Properties();
    pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, topic + "-txn");
    pp.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "30000");
    try (KafkaProducer<String, String> p = producer(pp)) {
      p.initTransactions();
      String[][] txns = {{"a", "b", "c"}, {"x", "y"}, {"d"}};
      for (int t = 0; t < txns.length; t++) {
        p.beginTransaction();
        for (String v : txns[t]) p.send(new ProducerRecord<>(topic, 0, 1_700_000_000_000L, v, v));
        if (t == 1) {
          // Flushed first so the aborted records reach the log and are skipped by read_committed
          // because of the abort marker, not because they were never sent.
          p.flush();
          p.abortTransaction();
        } else {
          p.commitTransaction();
        }
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    for (String iso : List.of("read_committed", "read_uncommitted")) {
      Properties cp = new Properties();
      cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, iso);
      try (KafkaConsumer<String, String> c = consumer(cp)) {
        List<String> seen = new ArrayList<>();
        for (Map<String, Object> r : readAll(c, partitions(topic, 1))) seen.add(r.get("offset") + ":" + r.get("value"));
        out.put(iso, seen);
        out.put(iso + "EndOffset", c.endOffsets(partitions(topic, 1)).get(new TopicPartition(topic, 0)));
      }
    }
    return out;
  }

  private Map<String, Object> group() throws Exception {
    String protocol = opts.getOrDefault("protocol", "classic");
    String groupId = topic + "-group";
    try (Admin admin = admin()) {
      createTopic(admin, new NewTopic(topic, 4, (short) 1));
    }
    try (KafkaProducer<String, String> p = producer(new Properties())) {
      for (int i = 0; i < 8; i++) p.send(new ProducerRecord<>(topic, i % 4, "k" + i, "v" + i));
      p.flush();
    }
    Properties cp = new Properties();
    cp.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    cp.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
    if (protocol.equals("classic")) {
      cp.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
      cp.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
    }
    Map<String, Object> out = new LinkedHashMap<>();
    try (KafkaConsumer<String, String> c1 = consumer(cp); KafkaConsumer<String, String> c2 = consumer(cp)) {
      c1.subscribe(List.of(topic));
      c2.subscribe(List.of(topic));
      Map<String, String> seen = new TreeMap<>();
      long deadline = System.currentTimeMillis() + 60_000;
      // Settled: both members own 2 partitions and have read each of them to its end (offset 2), so
      // the commits below cover all 4 partitions whichever member read a record first.
      while (!(seen.size() == 8 && caughtUp(c1) && caughtUp(c2))) {
        if (System.currentTimeMillis() > deadline) {
          throw new IllegalStateException("group did not settle: seen=" + seen.size() + " c1=" + c1.assignment()
              + " c2=" + c2.assignment());
        }
        for (KafkaConsumer<String, String> c : List.of(c1, c2)) {
          for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
            seen.put(r.partition() + ":" + r.offset(), r.value());
          }
        }
      }
      c1.commitSync();
      c2.commitSync();
      out.put("consumed", new ArrayList<>(seen.values()).stream().sorted().toList());
      List<Integer> sizes = new ArrayList<>(List.of(c1.assignment().size(), c2.assignment().size()));
      out.put("assignmentSizes", sizes);
      try (Admin admin = admin()) {
        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(groupId)).describedGroups().get(groupId).get();
        out.put("state", d.groupState().toString());
        out.put("type", d.type().toString());
        out.put("members", d.members().size());
        Map<String, Long> committed = new TreeMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e :
            admin.listConsumerGroupOffsets(groupId).partitionsToOffsetAndMetadata().get().entrySet()) {
          committed.put(Integer.toString(e.getKey().partition()), e.getValue().offset());
        }
        out.put("committed", committed);
      }
    }
    return out;
  }

  private static boolean caughtUp(KafkaConsumer<String, String> c) {
    if (c.assignment().size() != 2) return false;
    for (TopicPartition tp : c.assignment()) if (c.position(tp, Duration.ofSeconds(5)) < 2) return false;
    return true;
  }

  @SuppressWarnings("deprecation")
  private Map<String, Object> adminScenario() throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    try (Admin admin = admin()) {
      NewTopic nt = new NewTopic(topic, 1, (short) 1)
          .configs(Map.of("cleanup.policy", "compact", "retention.ms", "12345"));
      admin.createTopics(List.of(nt)).all().get();
      out.put("createAgain", errorOf(admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all()));
      out.put("describeMissingTopic",
          errorOf(admin.describeTopics(List.of(topic + "-missing")).allTopicNames()));

      ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
      out.put("configs", topicConfigs(admin, res));
      admin.incrementalAlterConfigs(Map.of(res, List.of(
          new AlterConfigOp(new ConfigEntry("retention.ms", "54321"), AlterConfigOp.OpType.SET),
          new AlterConfigOp(new ConfigEntry("cleanup.policy", ""), AlterConfigOp.OpType.DELETE)))).all().get();
      out.put("configsAfterAlter", topicConfigs(admin, res));
      out.put("alterUnknownConfig", errorOf(admin.incrementalAlterConfigs(Map.of(res, List.of(
          new AlterConfigOp(new ConfigEntry("no.such.config", "1"), AlterConfigOp.OpType.SET)))).all()));

      admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get();
      out.put("shrinkPartitions", errorOf(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2))).all()));
      TopicDescription td = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
      out.put("partitions", td.partitions().size());
      out.put("internal", td.isInternal());

      try (KafkaProducer<String, String> p = producer(new Properties())) {
        for (int i = 0; i < 5; i++) p.send(new ProducerRecord<>(topic, 0, 1000L * (i + 1), "k" + i, "v" + i));
        p.flush();
      }
      TopicPartition tp0 = new TopicPartition(topic, 0);
      out.put("lowWatermarkAfterDelete",
          admin.deleteRecords(Map.of(tp0, RecordsToDelete.beforeOffset(2))).lowWatermarks().get(tp0).get().lowWatermark());
      Map<String, Object> offsets = new LinkedHashMap<>();
      offsets.put("earliest", listOffset(admin, tp0, OffsetSpec.earliest()));
      offsets.put("latest", listOffset(admin, tp0, OffsetSpec.latest()));
      offsets.put("maxTimestamp", listOffset(admin, tp0, OffsetSpec.maxTimestamp()));
      offsets.put("forTimestamp3000", listOffset(admin, tp0, OffsetSpec.forTimestamp(3000)));
      offsets.put("forTimestamp9999", listOffset(admin, tp0, OffsetSpec.forTimestamp(9999)));
      out.put("listOffsets", offsets);

      String groupId = topic + "-admin-group";
      admin.alterConsumerGroupOffsets(groupId, Map.of(tp0, new OffsetAndMetadata(3, "meta"))).all().get();
      OffsetAndMetadata om = admin.listConsumerGroupOffsets(groupId).partitionsToOffsetAndMetadata().get().get(tp0);
      out.put("committedOffset", om.offset());
      out.put("committedMetadata", om.metadata());
      boolean listed = false;
      for (ConsumerGroupListing l : admin.listConsumerGroups().all().get()) if (l.groupId().equals(groupId)) listed = true;
      out.put("groupListed", listed);
      out.put("deleteGroup", errorOf(admin.deleteConsumerGroups(List.of(groupId)).all()));
      out.put("deleteTopic", errorOf(admin.deleteTopics(List.of(topic)).all()));
      out.put("deleteMissingTopic", errorOf(admin.deleteTopics(List.of(topic + "-missing")).all()));
    }
    return out;
  }

  private static Map<String, Object> topicConfigs(Admin admin, ConfigResource res) throws Exception {
    Config cfg = admin.describeConfigs(List.of(res)).all().get().get(res);
    Map<String, Object> m = new TreeMap<>();
    for (String key : List.of("cleanup.policy", "retention.ms", "max.message.bytes", "segment.bytes",
        "min.insync.replicas", "message.timestamp.type")) {
      ConfigEntry e = cfg.get(key);
      m.put(key, e == null ? null : e.value() + " (" + e.source() + ")");
    }
    return m;
  }

  private static long listOffset(Admin admin, TopicPartition tp, OffsetSpec spec) throws Exception {
    ListOffsetsResult.ListOffsetsResultInfo info = admin.listOffsets(Map.of(tp, spec)).partitionResult(tp).get();
    return info.offset();
  }
}
