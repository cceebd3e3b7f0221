package fjord.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * KIP-932 share groups through the Java KafkaShareConsumer, against any bootstrap address. Each
 * scenario prints one JSON object as its last stdout line.
 *
 * Usage: ShareGroups NAME bootstrap=HOST:PORT topic=T group=G [count=N]
 *   consume     N records produced, one consumer (implicit acknowledgement): every offset seen
 *   explicit    explicit acknowledgement: the first delivery of each even offset is RELEASEd
 *               (redelivered with delivery count 2), offset 1 REJECTed (never again), the rest ACCEPTed
 *   lock-timeout a consumer that acquires records and never acknowledges them; once the group's
 *               2 s lock has expired a second consumer gets the same offsets, delivery count 2
 *   shared      three consumers of one partition while a producer writes: each offset reaches one
 *               consumer at a time
 *   read-committed a group with share.isolation.level=read_committed and a transactional producer:
 *               a committed transaction, an aborted one, then one left open; the values the
 *               consumer gets before and after the open transaction commits
 */
public final class ShareGroups {
  private final Map<String, String> opts;
  private final String bootstrap;
  private final String topic;
  private final String group;

  private ShareGroups(Map<String, String> opts) {
    this.opts = opts;
    this.bootstrap = opts.get("bootstrap");
    this.topic = opts.getOrDefault("topic", "share-java");
    this.group = opts.getOrDefault("group", "share-" + topic);
  }

  public static void main(String[] args) {
    Map<String, String> opts = new HashMap<>();
    for (int i = 1; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      opts.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    Map<String, Object> out;
    int code = 0;
    try {
      ShareGroups s = new ShareGroups(opts);
      switch (args[0]) {
        case "consume": out = s.consume(); break;
        case "explicit": out = s.explicit(); break;
        case "lock-timeout": out = s.lockTimeout(); break;
        case "shared": out = s.shared(); break;
        case "read-committed": out = s.readCommitted(); break;
        default: throw new IllegalArgumentException("unknown scenario " + args[0]);
      }
    } catch (Exception e) {
      Throwable t = e.getCause() != null && e instanceof java.util.concurrent.ExecutionException ? e.getCause() : e;
      out = new LinkedHashMap<>();
      out.put("error", t.getClass().getSimpleName());
      out.put("message", String.valueOf(t.getMessage()));
      code = 1;
    }
    System.out.println(Json.write(out));
    System.out.flush();
    Runtime.getRuntime().halt(code);
  }

  private int count() {
    return Integer.parseInt(opts.getOrDefault("count", "200"));
  }

  private Properties base() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    return p;
  }

  /** One partition, the group reading from the earliest offset, and `lockMs` locks when given. */
  private void prepare(String lockMs) throws Exception {
    prepare(lockMs, null);
  }

  private void prepare(String lockMs, String isolation) throws Exception {
    try (Admin admin = Admin.create(base())) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
      List<AlterConfigOp> ops = new ArrayList<>();
      ops.add(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET));
      if (lockMs != null) ops.add(new AlterConfigOp(new ConfigEntry("share.record.lock.duration.ms", lockMs), AlterConfigOp.OpType.SET));
      if (isolation != null) ops.add(new AlterConfigOp(new ConfigEntry("share.isolation.level", isolation), AlterConfigOp.OpType.SET));
      admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops)).all().get();
    }
  }

  private void produce(int from, int to, long pauseEvery) throws Exception {
    Properties p = base();
    p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      for (int i = from; i < to; i++) {
        producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i));
        if (pauseEvery > 0 && i % pauseEvery == pauseEvery - 1) {
          producer.flush();
          Thread.sleep(20);
        }
      }
      producer.flush();
    }
  }

  private KafkaShareConsumer<String, String> consumer(String clientId, boolean explicit, int maxPollRecords) {
    Properties p = base();
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Integer.toString(maxPollRecords));
    if (explicit) p.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
    KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    c.subscribe(List.of(topic));
    return c;
  }

  private static long deadlineIn(long ms) {
    return System.currentTimeMillis() + ms;
  }

  private Map<String, Object> consume() throws Exception {
    int n = count();
    prepare(null);
    produce(0, n, 0);
    Set<Long> seen = new TreeSet<>();
    int deliveries = 0;
    boolean valuesMatch = true;
    try (KafkaShareConsumer<String, String> c = consumer("share-consume", false, 50)) {
      long deadline = deadlineIn(60_000);
      while (seen.size() < n && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
          seen.add(r.offset());
          deliveries++;
          if (!r.value().equals("v" + r.offset())) valuesMatch = false;
        }
      }
      c.commitSync();
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("produced", n);
    out.put("distinct", seen.size());
    out.put("deliveries", deliveries);
    out.put("valuesMatch", valuesMatch);
    return out;
  }

  private Map<String, Object> explicit() throws Exception {
    int n = 20;
    prepare(null);
    produce(0, n, 0);
    Map<Long, List<Integer>> deliveryCounts = new TreeMap<>();
    Set<Long> done = new TreeSet<>();
    int commitErrors = 0;
    try (KafkaShareConsumer<String, String> c = consumer("share-explicit", true, 100)) {
      long deadline = deadlineIn(60_000);
      // Done once every offset but the rejected one is accepted, and a further poll brought nothing.
      while (System.currentTimeMillis() < deadline) {
        ConsumerRecords<String, String> records = c.poll(Duration.ofMillis(1000));
        if (records.isEmpty() && done.size() == n) break;
        for (ConsumerRecord<String, String> r : records) {
          int dc = r.deliveryCount().map(Short::intValue).orElse(-1);
          deliveryCounts.computeIfAbsent(r.offset(), k -> new ArrayList<>()).add(dc);
          if (r.offset() == 1) {
            c.acknowledge(r, AcknowledgeType.REJECT);
            done.add(r.offset());
          } else if (r.offset() % 2 == 0 && dc == 1) {
            c.acknowledge(r, AcknowledgeType.RELEASE);
          } else {
            c.acknowledge(r, AcknowledgeType.ACCEPT);
            done.add(r.offset());
          }
        }
        for (Optional<KafkaException> e : c.commitSync().values()) if (e.isPresent()) commitErrors++;
      }
    }
    Map<String, Object> counts = new LinkedHashMap<>();
    for (Map.Entry<Long, List<Integer>> e : deliveryCounts.entrySet()) counts.put(Long.toString(e.getKey()), e.getValue());
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("deliveryCounts", counts);
    out.put("commitErrors", commitErrors);
    return out;
  }

  private Map<String, Object> lockTimeout() throws Exception {
    int n = 10;
    prepare("2000");
    produce(0, n, 0);
    List<Long> first = new ArrayList<>();
    List<Long> second = new ArrayList<>();
    List<Integer> secondCounts = new ArrayList<>();
    try (KafkaShareConsumer<String, String> holder = consumer("share-holder", true, 100)) {
      long deadline = deadlineIn(30_000);
      while (first.isEmpty() && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, String> r : holder.poll(Duration.ofMillis(500))) first.add(r.offset());
      }
      // The holder never acknowledges and never polls again: its locks must expire on the broker.
      try (KafkaShareConsumer<String, String> taker = consumer("share-taker", false, 100)) {
        long until = deadlineIn(30_000);
        while (second.size() < first.size() && System.currentTimeMillis() < until) {
          for (ConsumerRecord<String, String> r : taker.poll(Duration.ofMillis(500))) {
            second.add(r.offset());
            secondCounts.add(r.deliveryCount().map(Short::intValue).orElse(-1));
          }
        }
        taker.commitSync();
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("first", first);
    out.put("second", second);
    out.put("secondDeliveryCounts", secondCounts);
    return out;
  }

  /** Polls `c` until `want` values arrived or `ms` passed; returns the values, in arrival order. */
  private static List<String> pollValues(KafkaShareConsumer<String, String> c, int want, long ms) {
    List<String> got = new ArrayList<>();
    long deadline = deadlineIn(ms);
    while (got.size() < want && System.currentTimeMillis() < deadline) {
      for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(300))) got.add(r.value());
    }
    return got;
  }

  private Map<String, Object> readCommitted() throws Exception {
    prepare(null, "read_committed");
    Properties p = base();
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, topic + "-txn");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    List<String> before;
    List<String> after;
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
         KafkaShareConsumer<String, String> c = consumer("share-read-committed", false, 100)) {
      producer.initTransactions();
      producer.beginTransaction();
      for (int i = 0; i < 3; i++) producer.send(new ProducerRecord<>(topic, "k", "committed-" + i));
      producer.commitTransaction();
      producer.beginTransaction();
      for (int i = 0; i < 3; i++) producer.send(new ProducerRecord<>(topic, "k", "aborted-" + i));
      producer.flush();
      producer.abortTransaction();
      producer.beginTransaction();
      for (int i = 0; i < 2; i++) producer.send(new ProducerRecord<>(topic, "k", "open-" + i));
      producer.flush();
      // Up to the open transaction: the committed records, then nothing more for a while.
      before = pollValues(c, 4, 4_000);
      producer.commitTransaction();
      after = pollValues(c, 2, 30_000);
      c.commitSync();
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("beforeCommit", before);
    out.put("afterCommit", after);
    return out;
  }

  private Map<String, Object> shared() throws Exception {
    int n = count();
    prepare(null);
    Map<Long, List<String>> receivedBy = new ConcurrentHashMap<>();
    AtomicBoolean stop = new AtomicBoolean(false);
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    for (int i = 0; i < 3; i++) {
      String id = "share-shared-" + i;
      Thread t = new Thread(() -> {
        try (KafkaShareConsumer<String, String> c = consumer(id, false, 5)) {
          while (!stop.get()) {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
              receivedBy.computeIfAbsent(r.offset(), k -> Collections.synchronizedList(new ArrayList<>())).add(id);
            }
          }
          c.commitSync();
        } catch (Throwable e) {
          failures.add(e);
        }
      });
      t.start();
      threads.add(t);
    }
    // Let the three members join before the records arrive, so all of them compete for them.
    Thread.sleep(3000);
    produce(0, n, 5);
    long deadline = deadlineIn(60_000);
    while (receivedBy.size() < n && System.currentTimeMillis() < deadline) Thread.sleep(100);
    Thread.sleep(1000);
    stop.set(true);
    for (Thread t : threads) t.join(30_000);
    int duplicates = 0;
    Map<String, Integer> perConsumer = new TreeMap<>();
    for (List<String> who : receivedBy.values()) {
      if (who.size() > 1) duplicates++;
      for (String id : who) perConsumer.merge(id, 1, Integer::sum);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("produced", n);
    out.put("distinct", receivedBy.size());
    out.put("duplicates", duplicates);
    out.put("consumers", perConsumer.size());
    out.put("failures", failures.size() == 0 ? List.of() : List.of(String.valueOf(failures.get(0))));
    return out;
  }
}
