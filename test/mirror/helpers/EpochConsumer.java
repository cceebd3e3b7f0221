import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The Java consumer resuming a group after failover: args bootstrap topic group want seconds.
 * On resuming from a committed offset the Java client records the committed leader epoch as the
 * last seen epoch of the partition and ignores metadata with a lower epoch, then validates the
 * position with OffsetForLeaderEpoch; a destination epoch below the committed one leaves it
 * without a usable leader. auto.offset.reset=none: a reset is an error, not a silent restart.
 * Prints one JSON line: the offsets read and the elapsed time.
 */
public final class EpochConsumer {
  public static void main(String[] args) {
    String bootstrap = args[0], topic = args[1], group = args[2];
    int want = Integer.parseInt(args[3]);
    long millis = (long) (Double.parseDouble(args[4]) * 1000);
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
    p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
    List<Long> offsets = new ArrayList<>();
    List<String> values = new ArrayList<>();
    String error = null;
    long start = System.currentTimeMillis();
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
      c.subscribe(List.of(topic));
      while (offsets.size() < want && System.currentTimeMillis() - start < millis) {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
          offsets.add(r.offset());
          values.add(r.value());
        }
      }
    } catch (RuntimeException e) {
      error = e.getClass().getSimpleName() + ": " + e.getMessage();
    }
    long elapsed = System.currentTimeMillis() - start;
    StringBuilder out = new StringBuilder("{\"offsets\":").append(offsets).append(",\"values\":[");
    for (int i = 0; i < values.size(); i++) out.append(i == 0 ? "" : ",").append('"').append(values.get(i)).append('"');
    out.append("],\"elapsedMs\":").append(elapsed).append(",\"error\":");
    out.append(error == null ? "null" : "\"" + error.replace("\\", "\\\\").replace("\"", "'") + "\"").append('}');
    System.out.println(out);
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }
}
