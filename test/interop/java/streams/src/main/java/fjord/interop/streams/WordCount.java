package fjord.interop.streams;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * A stateful word count (flatMap, groupBy: a repartition topic, count: a changelog-backed store)
 * run as two Kafka Streams instances with group.protocol=streams (KIP-1071) against any
 * bootstrap address. It prints one JSON line per phase and waits for a line on stdin between
 * phases, so the caller can inspect the group with the stock tools meanwhile:
 *
 *   running  both instances RUNNING, the first input counted: each instance's active tasks
 *   (stdin "close") instance a is closed (leaving the group); b must take over every task
 *   moved    b's tasks, then more input counted on top of the restored store
 *   (stdin "stop")  b is closed
 *   done     whether every output sequence was exactly 1, 2, ..., n per word and the final counts
 *
 * Usage: WordCount bootstrap=HOST:PORT app=APPLICATION_ID [lines=N]
 */
public final class WordCount {
  private static final String[] WORDS = {"fjord", "kafka", "streams", "group", "task", "epoch", "topic", "count"};

  private final String bootstrap;
  private final String app;
  private final String input;
  private final String output;
  private final int lines;
  private final Map<String, Long> expected = new TreeMap<>();
  private int produced = 0;

  private WordCount(Map<String, String> opts) {
    this.bootstrap = opts.get("bootstrap");
    this.app = opts.getOrDefault("app", "wordcount");
    this.input = app + "-input";
    this.output = app + "-output";
    this.lines = Integer.parseInt(opts.getOrDefault("lines", "40"));
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new HashMap<>();
    for (String a : args) {
      int i = a.indexOf('=');
      if (i > 0) opts.put(a.substring(0, i), a.substring(i + 1));
    }
    try {
      new WordCount(opts).run();
      System.exit(0);
    } catch (Throwable t) {
      Map<String, Object> err = new TreeMap<>();
      err.put("error", t.getClass().getName());
      err.put("message", String.valueOf(t.getMessage()));
      System.out.println(json(err));
      System.out.flush();
      System.exit(1);
    }
  }

  private void run() throws Exception {
    Properties ap = new Properties();
    ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin admin = Admin.create(ap)) {
      admin.createTopics(List.of(new NewTopic(input, 2, (short) 1), new NewTopic(output, 1, (short) 1))).all().get();
    }
    BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    KafkaStreams a = start("a");
    KafkaStreams b = start("b");
    waitFor("both instances RUNNING", 60_000, () -> a.state() == KafkaStreams.State.RUNNING && b.state() == KafkaStreams.State.RUNNING);
    produce(lines);
    Map<String, List<Long>> seen = awaitCounts();
    waitFor("every task assigned", 30_000, () -> tasks(a).size() + tasks(b).size() == 4);
    Map<String, Object> running = new TreeMap<>();
    running.put("phase", "running");
    running.put("a", new ArrayList<>(tasks(a)));
    running.put("b", new ArrayList<>(tasks(b)));
    running.put("counted", seen.size());
    emit(running);

    expectLine(stdin, "close");
    a.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP).withTimeout(Duration.ofSeconds(30)));
    waitFor("b running every task", 60_000, () -> b.state() == KafkaStreams.State.RUNNING && tasks(b).size() == 4);
    produce(lines);
    seen = awaitCounts();
    Map<String, Object> moved = new TreeMap<>();
    moved.put("phase", "moved");
    moved.put("b", new ArrayList<>(tasks(b)));
    moved.put("aState", a.state().toString());
    emit(moved);

    expectLine(stdin, "stop");
    b.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP).withTimeout(Duration.ofSeconds(30)));
    boolean sequences = true;
    for (Map.Entry<String, List<Long>> e : seen.entrySet()) {
      List<Long> l = e.getValue();
      for (int i = 0; i < l.size(); i++) if (l.get(i) != i + 1) sequences = false;
      if (l.size() != expected.get(e.getKey())) sequences = false;
    }
    Map<String, Object> done = new TreeMap<>();
    done.put("phase", "done");
    done.put("linesProduced", produced);
    done.put("exactSequences", sequences);
    Map<String, Object> finals = new TreeMap<>();
    for (Map.Entry<String, List<Long>> e : seen.entrySet()) finals.put(e.getKey(), e.getValue().get(e.getValue().size() - 1));
    done.put("counts", finals);
    Map<String, Object> exp = new TreeMap<>(expected);
    done.put("expected", exp);
    emit(done);
  }

  private KafkaStreams start(String name) throws Exception {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
    p.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("fjord-streams-" + name).toString());
    p.put(StreamsConfig.CLIENT_ID_CONFIG, app + "-" + name);
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
    p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    StreamsBuilder sb = new StreamsBuilder();
    sb.<String, String>stream(input)
        .flatMapValues(v -> Arrays.asList(v.toLowerCase(Locale.ROOT).split("\\W+")))
        .groupBy((k, w) -> w)
        .count(Materialized.as("counts"))
        .toStream()
        .to(output, Produced.with(Serdes.String(), Serdes.Long()));
    KafkaStreams s = new KafkaStreams(sb.build(), p);
    s.start();
    return s;
  }

  private static TreeSet<String> tasks(KafkaStreams s) {
    TreeSet<String> out = new TreeSet<>();
    for (ThreadMetadata t : s.metadataForLocalThreads()) t.activeTasks().forEach(m -> out.add(m.taskId().toString()));
    return out;
  }

  /** `n` lines of three words each, keyed so both input partitions get some. */
  private void produce(int n) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    try (KafkaProducer<String, String> pr = new KafkaProducer<>(p)) {
      for (int i = 0; i < n; i++) {
        int k = produced++;
        String[] ws = {WORDS[k % WORDS.length], WORDS[(k * 3 + 1) % WORDS.length], WORDS[(k * 5 + 2) % WORDS.length]};
        for (String w : ws) expected.merge(w, 1L, Long::sum);
        pr.send(new ProducerRecord<>(input, "line-" + k, String.join(" ", ws))).get();
      }
    }
  }

  /** Reads the output topic from the start until the latest count of every word is the expected one. */
  private Map<String, List<Long>> awaitCounts() throws Exception {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class);
    Map<String, List<Long>> seen = new TreeMap<>();
    try (KafkaConsumer<String, Long> c = new KafkaConsumer<>(p)) {
      TopicPartition tp = new TopicPartition(output, 0);
      c.assign(List.of(tp));
      c.seekToBeginning(List.of(tp));
      long deadline = System.currentTimeMillis() + 60_000;
      while (System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, Long> r : c.poll(Duration.ofMillis(200))) seen.computeIfAbsent(r.key(), x -> new ArrayList<>()).add(r.value());
        boolean all = true;
        for (Map.Entry<String, Long> e : expected.entrySet()) {
          List<Long> l = seen.get(e.getKey());
          if (l == null || !l.get(l.size() - 1).equals(e.getValue())) all = false;
        }
        if (all) return seen;
      }
    }
    throw new IllegalStateException("counts not reached: expected " + expected + ", last seen " + seen);
  }

  private static void waitFor(String what, long ms, BooleanSupplier cond) throws InterruptedException {
    long deadline = System.currentTimeMillis() + ms;
    while (!cond.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("timed out waiting for " + what);
      Thread.sleep(50);
    }
  }

  private static void expectLine(BufferedReader in, String want) throws Exception {
    String l = in.readLine();
    if (l == null || !l.trim().equals(want)) throw new IllegalStateException("expected '" + want + "' on stdin, got " + l);
  }

  private static void emit(Map<String, Object> m) {
    System.out.println(json(m));
    System.out.flush();
  }

  private static String json(Object v) {
    if (v == null) return "null";
    if (v instanceof Number || v instanceof Boolean) return v.toString();
    if (v instanceof Map<?, ?> m) {
      StringBuilder sb = new StringBuilder("{");
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (sb.length() > 1) sb.append(',');
        sb.append(json(String.valueOf(e.getKey()))).append(':').append(json(e.getValue()));
      }
      return sb.append('}').toString();
    }
    if (v instanceof List<?> l) {
      StringBuilder sb = new StringBuilder("[");
      for (Object o : l) {
        if (sb.length() > 1) sb.append(',');
        sb.append(json(o));
      }
      return sb.append(']').toString();
    }
    return '"' + v.toString().replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }
}
