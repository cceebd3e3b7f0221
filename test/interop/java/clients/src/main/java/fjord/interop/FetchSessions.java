package fjord.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Java consumers whose fetch sessions (KIP-227) change while fetches are in flight, against any
 * bootstrap address. Each prints one JSON object as its last stdout line: how many records were
 * produced and how many of them no consumer ever saw (0 when the broker keeps serving sessions
 * through every reset).
 *
 * Usage: FetchSessions NAME bootstrap=HOST:PORT topic=T [key=value ...]
 *   seek [cut=true]      one consumer, assigned two partitions while a producer writes: it seeks
 *                        back, pauses and resumes partitions between polls shorter than the fetch wait;
 *                        with cut=true its requests time out before an idle fetch wait ends, so
 *                        each pause of the producer cuts the connection and the consumer resets its
 *                        session (a full fetch naming the old session: SessionId X, epoch 0)
 *   rebalance protocol=classic|consumer
 *                        a group (cooperative-sticky for classic, KIP-848 otherwise) that members
 *                        join and leave while a producer writes
 */
public final class FetchSessions {
  private final Map<String, String> opts;
  private final String bootstrap;
  private final String topic;

  private FetchSessions(Map<String, String> opts) {
    this.opts = opts;
    this.bootstrap = opts.get("bootstrap");
    if (bootstrap == null) throw new IllegalArgumentException("missing option bootstrap");
    this.topic = opts.getOrDefault("topic", "interop-fetch-sessions");
  }

  public static void main(String[] args) {
    if (args.length < 1) {
      System.err.println("usage: FetchSessions NAME bootstrap=HOST:PORT [key=value ...]");
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
      FetchSessions s = new FetchSessions(opts);
      switch (args[0]) {
        case "seek": out = s.seek(); break;
        case "rebalance": out = s.rebalance(); break;
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

  private int intOpt(String key, int dflt) {
    return Integer.parseInt(opts.getOrDefault(key, Integer.toString(dflt)));
  }

  private Properties base() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    p.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "1000");
    p.put(AdminClientConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "3000");
    return p;
  }

  private KafkaConsumer<String, String> consumer(Properties extra) {
    Properties p = base();
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    // Long fetch waits with short polls: the consumer changes its session while a fetch is out.
    p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "400");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
    p.putAll(extra);
    return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
  }

  private void createTopic(int partitions) throws Exception {
    Properties p = base();
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    try (Admin admin = Admin.create(p)) {
      admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
    }
  }

  /**
   * Writes `total` records keyed k0..k(total-1) round robin over the partitions, `perTick` every
   * 20 ms, resting `restMs` after every 500.
   */
  private Thread producer(int partitions, int total, int perTick, long restMs, AtomicReference<Exception> failure) {
    Thread t = new Thread(() -> {
      Properties p = base();
      p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
      p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
      p.put(ProducerConfig.LINGER_MS_CONFIG, "2");
      try (KafkaProducer<String, String> prod = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
        for (int i = 0; i < total; i++) {
          prod.send(new ProducerRecord<>(topic, i % partitions, "k" + i, "v" + i));
          if (i % perTick == perTick - 1) {
            prod.flush();
            Thread.sleep(20);
          }
          if (restMs > 0 && i % 500 == 499) {
            prod.flush();
            Thread.sleep(restMs);
          }
        }
        prod.flush();
      } catch (Exception e) {
        failure.set(e);
      }
    }, "producer");
    t.start();
    return t;
  }

  private static int missing(Set<String> seen, int total) {
    int n = 0;
    for (int i = 0; i < total; i++) if (!seen.contains("k" + i)) n++;
    return n;
  }

  private Map<String, Object> seek() throws Exception {
    int total = intOpt("count", 2000);
    createTopic(2);
    AtomicReference<Exception> failure = new AtomicReference<>();
    boolean cut = Boolean.parseBoolean(opts.getOrDefault("cut", "false"));
    Properties cp = new Properties();
    if (cut) {
      // A fetch that waits for data outlives the request timeout: the client drops the connection
      // and its next fetch reopens the session (FetchSessionHandler.handleError).
      cp.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "1500");
      cp.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "1000");
    }
    Thread prod = producer(2, total, 20, cut ? 2500 : 0, failure);
    TopicPartition p0 = new TopicPartition(topic, 0);
    TopicPartition p1 = new TopicPartition(topic, 1);
    Set<String> seen = new java.util.HashSet<>();
    int seeks = 0;
    int pauses = 0;
    try (KafkaConsumer<String, String> c = consumer(cp)) {
      c.assign(List.of(p0, p1));
      long deadline = System.currentTimeMillis() + 90_000;
      for (int round = 0; prod.isAlive() || missing(seen, total) > 0; round++) {
        if (System.currentTimeMillis() > deadline) {
          throw new IllegalStateException("stopped consuming: " + missing(seen, total) + " of " + total + " records never seen");
        }
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(30))) seen.add(r.key());
        switch (round % 8) {
          case 2: {
            // Back over what was read: the next fetch names p0 again at an older offset.
            long pos = c.position(p0);
            c.seek(p0, Math.max(0, pos - 25));
            seeks++;
            break;
          }
          case 4:
            c.pause(List.of(p1));
            pauses++;
            break;
          case 6:
            c.resume(List.of(p1));
            break;
          default:
            break;
        }
      }
    }
    prod.join();
    if (failure.get() != null) throw failure.get();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("produced", total);
    out.put("missing", missing(seen, total));
    out.put("seeked", seeks > 0);
    out.put("paused", pauses > 0);
    return out;
  }

  /** A group member on its own thread, committing what it has read after each poll. */
  private final class Member implements Runnable {
    final String name;
    final Properties props;
    final Set<String> seen;
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicInteger assigned = new AtomicInteger();
    final AtomicInteger commitsRefused = new AtomicInteger();
    final AtomicReference<Exception> failure;
    final Thread thread;

    Member(String name, Properties props, Set<String> seen, AtomicReference<Exception> failure) {
      this.name = name;
      this.props = props;
      this.seen = seen;
      this.failure = failure;
      this.thread = new Thread(this, name);
      thread.start();
    }

    @Override
    public void run() {
      try (KafkaConsumer<String, String> c = consumer(props)) {
        c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
          @Override
          public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) commit(c);
          }

          @Override
          public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            assigned.set(c.assignment().size());
          }
        });
        while (!stop.get()) {
          ConsumerRecords<String, String> rs = c.poll(Duration.ofMillis(50));
          for (ConsumerRecord<String, String> r : rs) seen.add(r.key());
          if (!rs.isEmpty()) commit(c);
          assigned.set(c.assignment().size());
        }
      } catch (Exception e) {
        failure.compareAndSet(null, e);
      }
    }

    /**
     * Commits what was read. A commit refused because the group is rebalancing (or, with KIP-848,
     * because the member epoch moved on) only means the next owner reads those records again.
     */
    private void commit(KafkaConsumer<String, String> c) {
      try {
        c.commitSync();
      } catch (CommitFailedException | RebalanceInProgressException e) {
        commitsRefused.incrementAndGet();
      }
    }

    void leave() throws InterruptedException {
      stop.set(true);
      thread.join(60_000);
    }
  }

  private static void waitFor(String what, long timeoutMs, AtomicReference<Exception> failure, java.util.function.BooleanSupplier done) throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (!done.getAsBoolean()) {
      if (failure.get() != null) throw failure.get();
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("timed out waiting for " + what);
      Thread.sleep(50);
    }
  }

  private Map<String, Object> rebalance() throws Exception {
    String protocol = opts.getOrDefault("protocol", "classic");
    int partitions = 6;
    int total = intOpt("count", 6000);
    createTopic(partitions);
    Properties cp = new Properties();
    cp.put(ConsumerConfig.GROUP_ID_CONFIG, topic + "-group");
    cp.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
    if (protocol.equals("classic")) {
      cp.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
      cp.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
      cp.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
    }
    Set<String> seen = ConcurrentHashMap.newKeySet();
    AtomicReference<Exception> failure = new AtomicReference<>();
    Thread prod = producer(partitions, total, 30, 0, failure);
    List<Member> members = new ArrayList<>();
    int rebalances = 0;
    try {
      Member first = new Member("m1", cp, seen, failure);
      members.add(first);
      waitFor("m1 to own every partition", 60_000, failure, () -> first.assigned.get() == partitions);
      // Members join one by one while records keep coming, then the first one leaves.
      for (String name : List.of("m2", "m3")) {
        Member m = new Member(name, cp, seen, failure);
        members.add(m);
        waitFor(name + " to get partitions", 60_000, failure, () -> m.assigned.get() > 0);
        rebalances++;
      }
      first.leave();
      members.remove(first);
      waitFor("the rest to take m1's partitions", 60_000, failure, () -> members.stream().mapToInt(m -> m.assigned.get()).sum() == partitions);
      rebalances++;
      prod.join();
      waitFor("every record to be consumed", 60_000, failure, () -> missing(seen, total) == 0);
    } finally {
      for (Member m : members) m.leave();
    }
    if (failure.get() != null) throw failure.get();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("produced", total);
    out.put("missing", missing(seen, total));
    out.put("rebalances", rebalances);
    return out;
  }
}
