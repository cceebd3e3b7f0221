// Parses every sample from dump-samples.ts with Kafka's own generated message classes and
// writes it back: the bytes must be consumed exactly and re-serialize identically. Not part of
// `npm test` (it needs a JDK and the Kafka jars); see README.md next to it.
import java.lang.reflect.Constructor;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;

public class CrossCheck {
  private static final Pattern LINE = Pattern.compile("\\{\"name\":\"(\\w+)\",\"kind\":\"([\\w-]+)\",\"version\":(\\d+),\"hex\":\"([0-9a-f]*)\"\\}");
  private static final String[] PACKAGES = {
    "org.apache.kafka.common.message.",
    "org.apache.kafka.common.metadata.",
    "org.apache.kafka.coordinator.group.generated.",
    "org.apache.kafka.coordinator.share.generated.",
    "org.apache.kafka.coordinator.transaction.generated.",
    "org.apache.kafka.raft.generated.",
  };

  static Class<?> find(String name) {
    for (String p : PACKAGES) {
      for (String n : new String[] {name + "Data", name}) {
        try {
          return Class.forName(p + n);
        } catch (ClassNotFoundException e) {
          // try the next
        }
      }
    }
    return null;
  }

  public static void main(String[] args) throws Exception {
    Map<String, int[]> stats = new TreeMap<>(); // ok, mismatch, unsupported, missing
    // optional second argument: where to write the largest verified sample of each message version
    Map<String, String> verified = new TreeMap<>();
    int shown = 0;
    for (String line : Files.readAllLines(Paths.get(args[0]))) {
      Matcher m = LINE.matcher(line);
      if (!m.matches()) continue;
      String name = m.group(1);
      short version = Short.parseShort(m.group(3));
      byte[] bytes = HexFormat.of().parseHex(m.group(4));
      int[] s = stats.computeIfAbsent(name, k -> new int[4]);
      Class<?> cls = find(name);
      if (cls == null) {
        s[3]++;
        continue;
      }
      String problem = null;
      try {
        Constructor<?> ctor = cls.getConstructor(org.apache.kafka.common.protocol.Readable.class, short.class);
        ByteBufferAccessor in = new ByteBufferAccessor(ByteBuffer.wrap(bytes));
        Message msg = (Message) ctor.newInstance(in, version);
        if (version > msg.highestSupportedVersion()) {
          s[2]++; // Kafka reads some newer versions without complaint; they prove nothing
          continue;
        }
        if (in.remaining() != 0) problem = in.remaining() + " bytes left";
        else {
          ObjectSerializationCache cache = new ObjectSerializationCache();
          int size = msg.size(cache, version);
          ByteBuffer out = ByteBuffer.allocate(size);
          msg.write(new ByteBufferAccessor(out), cache, version);
          byte[] back = out.array();
          if (!java.util.Arrays.equals(back, bytes)) problem = "re-encoded differently: " + HexFormat.of().formatHex(back);
        }
      } catch (java.lang.reflect.InvocationTargetException e) {
        Throwable c = e.getCause();
        if (c instanceof org.apache.kafka.common.errors.UnsupportedVersionException) {
          s[2]++;
          continue;
        }
        problem = c.toString();
      }
      if (problem == null) {
        s[0]++;
        String key = name + " " + version;
        String prev = verified.get(key);
        if (prev == null || prev.length() < line.length()) verified.put(key, line);
      }
      else {
        s[1]++;
        if (shown++ < 40) System.out.println("MISMATCH " + name + " v" + version + " " + m.group(4) + " : " + problem);
      }
    }
    int ok = 0, bad = 0, unsupported = 0, missing = 0;
    for (Map.Entry<String, int[]> e : stats.entrySet()) {
      int[] s = e.getValue();
      ok += s[0];
      bad += s[1];
      unsupported += s[2];
      missing += s[3];
      if (s[1] > 0 || s[2] > 0 || s[3] > 0) System.out.println(e.getKey() + " ok=" + s[0] + " mismatch=" + s[1] + " unsupportedVersion=" + s[2] + " noJavaClass=" + s[3]);
    }
    if (args.length > 1) Files.write(Paths.get(args[1]), verified.values());
    System.out.println("TOTAL ok=" + ok + " mismatch=" + bad + " unsupportedVersion=" + unsupported + " noJavaClass=" + missing);
  }
}
