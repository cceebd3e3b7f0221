package fjord.interop;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A Java client that keeps producing and consuming while the cluster loses a node: an idempotent
 * acks=all producer sends the values 0, 1, 2, ... to one topic at a steady pace, and a consumer in a
 * group reads them and commits. Every 200 ms it prints a progress line
 * {"progress":true,"acked":N,"consumed":M,"maxConsumed":V}; after "stop" on stdin (or stdin closed)
 * it stops producing, flushes, waits until the consumer has seen every acknowledged value, commits,
 * and prints {"acked":[...],"consumed":[...],"errors":[...]} as its last line.
 *
 * With transactional.id=ID the producer writes transactions of ten values each and the consumer
 * reads read_committed: a value counts as acknowledged once its transaction committed, and the
 * values of transactions the producer had to abort are listed as "aborted".
 *
 * Usage: ClusterFailover bootstrap=HOST:PORT topic=T group=G [pace.ms=5] [transactional.id=ID]
 */
public final class ClusterFailover {
  private ClusterFailover() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new LinkedHashMap<>();
    for (String a : args) {
      int eq = a.indexOf('=');
      if (eq < 0) throw new IllegalArgumentException("expected key=value: " + a);
      opts.put(a.substring(0, eq), a.substring(eq + 1));
    }
    String bootstrap = opts.get("bootstrap");
    String topic = opts.get("topic");
    String group = opts.get("group");
    long paceMs = Long.parseLong(opts.getOrDefault("pace.ms", "5"));
    String transactionalId = opts.get("transactional.id");

    AtomicBoolean stop = new AtomicBoolean(false);
    Thread stdin = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null && !line.trim().equals("stop")) { /* wait for stop */ }
      } catch (Exception e) { /* treated as stop */ }
      stop.set(true);
    }, "stdin");
    stdin.setDaemon(true);
    stdin.start();

    List<Long> acked = Collections.synchronizedList(new ArrayList<>());
    List<String> errors = Collections.synchronizedList(new ArrayList<>());
    List<Long> aborted = Collections.synchronizedList(new ArrayList<>());
    List<Long> consumed = new ArrayList<>();
    HashSet<Long> seen = new HashSet<>();
    AtomicLong maxConsumed = new AtomicLong(-1);

    Properties pp = new Properties();
    pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    pp.put(ProducerConfig.ACKS_CONFIG, "all");
    pp.put(ProducerConfig.LINGER_MS_CONFIG, "2");
    // Long enough to ride out a leader's loss (one broker session timeout plus an election).
    pp.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
    pp.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    pp.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, "2000");
    pp.put(ProducerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "1000");
    pp.put(ProducerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "2000");
    if (transactionalId != null) {
      pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
      pp.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "30000");
    }

    Properties cp = new Properties();
    cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    cp.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    cp.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
    cp.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
    cp.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    cp.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "2000");
    cp.put(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "1000");
    cp.put(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "2000");
    if (transactionalId != null) cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");

    Map<String, Object> out = new LinkedHashMap<>();
    int code = 0;
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer());
         KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp, new StringDeserializer(), new StringDeserializer())) {
      AtomicBoolean producing = new AtomicBoolean(true);
      if (transactionalId != null) producer.initTransactions();
      Thread sender = new Thread(() -> {
        if (transactionalId != null) sendTransactions(producer, topic, paceMs, stop, acked, aborted, errors);
        else sendIdempotent(producer, topic, paceMs, stop, acked, errors);
        producing.set(false);
      }, "sender");
      sender.start();

      consumer.subscribe(List.of(topic));
      long lastProgress = 0;
      long drainDeadline = Long.MAX_VALUE;
      while (true) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
          long v = Long.parseLong(r.value());
          consumed.add(v);
          seen.add(v);
          maxConsumed.accumulateAndGet(v, Math::max);
        }
        long now = System.currentTimeMillis();
        if (now - lastProgress >= 200) {
          lastProgress = now;
          consumer.commitAsync();
          Map<String, Object> p = new LinkedHashMap<>();
          p.put("progress", true);
          p.put("acked", acked.size());
          p.put("consumed", consumed.size());
          p.put("maxConsumed", maxConsumed.get());
          System.out.println(Json.write(p));
          System.out.flush();
        }
        if (!producing.get()) {
          if (drainDeadline == Long.MAX_VALUE) drainDeadline = now + 30_000;
          if (seen.containsAll(acked) || now > drainDeadline) break;
        }
      }
      consumer.commitSync(Duration.ofSeconds(10));
      sender.join();
      List<Long> a;
      synchronized (acked) {
        a = new ArrayList<>(acked);
      }
      Collections.sort(a);
      out.put("acked", a);
      out.put("consumed", consumed);
      out.put("errors", new ArrayList<>(errors));
      out.put("aborted", new ArrayList<>(aborted));
    } catch (Exception e) {
      out.put("error", e.getClass().getSimpleName());
      out.put("message", String.valueOf(e.getMessage()));
      code = 1;
    }
    System.out.println(Json.write(out));
    System.out.flush();
    Runtime.getRuntime().halt(code);
  }

  private static void sendIdempotent(KafkaProducer<String, String> producer, String topic, long paceMs, AtomicBoolean stop,
      List<Long> acked, List<String> errors) {
    long seq = 0;
    while (!stop.get()) {
      final long value = seq++;
      producer.send(new ProducerRecord<>(topic, Long.toString(value)), (md, err) -> {
        if (err == null) acked.add(value);
        else errors.add(value + ":" + err.getClass().getSimpleName());
      });
      if (!pause(paceMs)) break;
    }
    producer.flush();
  }

  /**
   * Transactions of ten values. A commit that times out is retried (KafkaProducer allows it); an
   * abortable error aborts the transaction; a fatal one (fenced, out of order) ends producing.
   */
  private static void sendTransactions(KafkaProducer<String, String> producer, String topic, long paceMs, AtomicBoolean stop,
      List<Long> acked, List<Long> aborted, List<String> errors) {
    long seq = 0;
    while (!stop.get()) {
      List<Long> batch = new ArrayList<>();
      try {
        producer.beginTransaction();
        for (int i = 0; i < 10; i++) {
          long value = seq++;
          batch.add(value);
          producer.send(new ProducerRecord<>(topic, Long.toString(value)));
          if (!pause(paceMs)) break;
        }
        while (true) {
          try {
            producer.commitTransaction();
            break;
          } catch (TimeoutException e) {
            // retried: the outcome is not known until a commit or abort completes
          }
        }
        acked.addAll(batch);
      } catch (ProducerFencedException | OutOfOrderSequenceException | AuthorizationException e) {
        errors.add(batch + ":" + e.getClass().getSimpleName() + ": " + e.getMessage());
        return;
      } catch (KafkaException e) {
        try {
          producer.abortTransaction();
          aborted.addAll(batch);
        } catch (KafkaException fatal) {
          errors.add(batch + ":" + fatal.getClass().getSimpleName() + ": " + fatal.getMessage() + " (aborting after " + e.getClass().getSimpleName() + ": " + e.getMessage() + ")");
          return;
        }
      }
    }
  }

  private static boolean pause(long ms) {
    try {
      Thread.sleep(ms);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
