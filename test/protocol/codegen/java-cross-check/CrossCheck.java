// Parses every sample from dump-samples.ts with Kafka's own generated message classes and
// writes it back: the bytes must be consumed exactly and re-serialize identically. Its last line
// (`RESULT {...}`) also lists the version range of every message schema the Kafka jars on the
// classpath ship, and Kafka's Errors table, for java-cross-check.test.ts to compare with ours.
// Run by java-cross-check.test.ts in single-file source mode; see README.md next to it.
import java.io.File;
import java.lang.reflect.Constructor;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
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

  // The schema resources of kafka-clients, kafka-metadata, the coordinators and kafka-raft.
  private static final Pattern SCHEMA = Pattern.compile("common/(message|metadata)/\\w+\\.json");
  private static final Pattern NAME = Pattern.compile("\"name\"\\s*:\\s*\"(\\w+)\"");

  static String quote(String s) {
    return "\"" + s + "\"";
  }

  static String list(java.util.Collection<String> items) {
    List<String> q = new ArrayList<>();
    for (String i : items) q.add(quote(i));
    return "[" + String.join(",", q) + "]";
  }

  /** "Name": [lowest, highest] for every schema a Kafka jar on the classpath ships a class for. */
  static String schemaVersions() throws Exception {
    Map<String, String> out = new TreeMap<>();
    for (String path : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (!path.endsWith(".jar") || !new File(path).getName().startsWith("kafka")) continue;
      try (JarFile jar = new JarFile(path)) {
        for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
          JarEntry entry = e.nextElement();
          if (!SCHEMA.matcher(entry.getName()).matches()) continue;
          // The message's name, not the file's: ZkMigrationRecord.json holds ZkMigrationStateRecord.
          Matcher m = NAME.matcher(new String(jar.getInputStream(entry).readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
          if (!m.find()) continue;
          String name = m.group(1);
          Class<?> cls = find(name);
          if (cls == null || !Message.class.isAssignableFrom(cls)) continue;
          Message msg = (Message) cls.getConstructor().newInstance();
          if (msg.highestSupportedVersion() < msg.lowestSupportedVersion()) continue; // removed APIs
          out.put(name, "[" + msg.lowestSupportedVersion() + "," + msg.highestSupportedVersion() + "]");
        }
      }
    }
    List<String> parts = new ArrayList<>();
    for (Map.Entry<String, String> e : out.entrySet()) parts.add(quote(e.getKey()) + ":" + e.getValue());
    return "{" + String.join(",", parts) + "}";
  }

  /** [code, "NAME", retriable] for every entry of Kafka's Errors enum. */
  static String errors() {
    List<String> parts = new ArrayList<>();
    for (Errors e : Errors.values()) {
      boolean retriable = e.exception() instanceof RetriableException;
      parts.add("[" + e.code() + "," + quote(e.name()) + "," + retriable + "]");
    }
    return "[" + String.join(",", parts) + "]";
  }

  public static void main(String[] args) throws Exception {
    Map<String, int[]> stats = new TreeMap<>(); // ok, mismatch, unsupported, missing
    TreeSet<String> okVersions = new TreeSet<>(), badVersions = new TreeSet<>(), newerVersions = new TreeSet<>();
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
          newerVersions.add(name + " v" + version);
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
          newerVersions.add(name + " v" + version);
          continue;
        }
        problem = c.toString();
      }
      if (problem == null) {
        s[0]++;
        okVersions.add(name + " v" + version);
        String key = name + " " + version;
        String prev = verified.get(key);
        if (prev == null || prev.length() < line.length()) verified.put(key, line);
      }
      else {
        s[1]++;
        badVersions.add(name + " v" + version);
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
    TreeSet<String> noClass = new TreeSet<>();
    for (Map.Entry<String, int[]> e : stats.entrySet()) if (e.getValue()[3] > 0) noClass.add(e.getKey());
    System.out.println("RESULT {\"ok\":" + list(okVersions) + ",\"mismatch\":" + list(badVersions) + ",\"newerThanKafka\":" + list(newerVersions)
        + ",\"noJavaClass\":" + list(noClass) + ",\"kafkaVersions\":" + schemaVersions() + ",\"errors\":" + errors() + "}");
  }
}
