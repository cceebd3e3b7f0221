/**
 * What must differ between two correct brokers is taken out of a decoded answer before the two are
 * compared: cluster and node addresses, topic ids, member and producer ids, session ids, wall-clock
 * timestamps, throttle times, on-disk sizes (DescribeLogDirs), and error message wording (error
 * codes are compared; Kafka's exact sentences are not a contract). A config key's documentation
 * is each broker's own prose: only whether there is some is compared. Arrays of named things are sorted, since Kafka's hash-ordered
 * maps and Fjord's insertion order both answer correctly.
 */

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const DROP = new Set(['partitionSize', 'offsetLag', 'totalBytes', 'usableBytes', 'throttleTimeMs', 'errorMessage', 'unknownTaggedFields', 'host', 'port', 'rack', 'clusterId', 'supportedFeatures', 'finalizedFeatures', 'finalizedFeaturesEpoch', 'zkMigrationReady', 'endpoints', 'listeners']);
const OPAQUE_STRINGS = /^(memberId|leader|leaderId|groupInstanceId|memberEpoch|assignment|metadata|protocolMetadata|clientHost|clientId)$/;
const OPAQUE_IDS = /^(producerId|sessionId|coordinatorKey)$/;
const ORDER_KEYS = ['name', 'user', 'topic', 'topicName', 'resourceName', 'groupId', 'transactionalId', 'partitionIndex', 'partitionId', 'partition', 'index', 'apiKey', 'nodeId', 'brokerId', 'key', 'memberId', 'resourceType', 'configName'];

/**
 * The timestamp of every record the fuzzers write (plus its index): an hour ago, so retention by
 * time (7 days) never removes a fixture on one broker and not the other.
 */
export const RECORD_BASE_TS = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;

function isTime(key: string, v: bigint | number): boolean {
  // Wall-clock values only: a record timestamp the fuzzer chose or a special negative timestamp
  // stays, a broker's own clock reading (now, or a start time) goes.
  const n = Number(v);
  if (n >= RECORD_BASE_TS && n < RECORD_BASE_TS + 10_000) return false;
  return /(Timestamp|TimeMs|Time)$/i.test(key) && n > 1_750_000_000_000;
}

/** The answer as plain JSON with the must-differ parts replaced by placeholders. */
export function normalize(value: unknown, key = ''): Json {
  if (value === null || value === undefined) return null;
  if (Buffer.isBuffer(value)) return `bytes:${value.length}:${value.toString('hex').slice(0, 64)}`;
  if (value instanceof Map) return null;
  if (typeof value === 'bigint') {
    if (OPAQUE_IDS.test(key) && value >= 0n) return '<id>';
    if (isTime(key, value)) return '<time>';
    return value.toString();
  }
  if (typeof value === 'number') {
    if (OPAQUE_IDS.test(key) && value > 0) return '<id>';
    if (isTime(key, value)) return '<time>';
    return value;
  }
  if (typeof value === 'string') {
    if (key === 'documentation') return '<documentation>';
    if (/TopicId$/i.test(key) || key === 'topicId') return value === '00000000-0000-0000-0000-000000000000' ? value : '<topic-id>';
    if (OPAQUE_STRINGS.test(key) && value !== '') return '<opaque>';
    return value;
  }
  if (typeof value === 'boolean') return value;
  if (Array.isArray(value)) {
    const items = value.map((v) => normalize(v, key));
    if (items.every((i) => i !== null && typeof i === 'object' && !Array.isArray(i))) {
      const objs = items as { [k: string]: Json }[];
      const k = ORDER_KEYS.filter((o) => objs.some((x) => o in x));
      if (k.length > 0) objs.sort((a, b) => cmp(k.map((kk) => a[kk] ?? null), k.map((kk) => b[kk] ?? null)));
    }
    return items;
  }
  if (typeof value === 'object') {
    const out: { [k: string]: Json } = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (DROP.has(k)) continue;
      out[k] = normalize(v, k);
    }
    return out;
  }
  return String(value);
}

function cmp(a: Json[], b: Json[]): number {
  const sa = JSON.stringify(a);
  const sb = JSON.stringify(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

export interface Difference {
  /** Dotted path with array indexes, e.g. `topics.0.errorCode`. */
  readonly path: string;
  /** The same with indexes as `*`: what a known difference is listed by. */
  readonly pattern: string;
  readonly kafka: Json | undefined;
  readonly fjord: Json | undefined;
}

/** Every leaf where the two normalized answers differ (a missing side is `undefined`). */
export function diff(kafka: Json | undefined, fjord: Json | undefined, path: string[] = [], out: Difference[] = []): Difference[] {
  const both = (x: Json | undefined): x is { [k: string]: Json } => x !== null && x !== undefined && typeof x === 'object' && !Array.isArray(x);
  if (Array.isArray(kafka) && Array.isArray(fjord)) {
    const key = identityKey(kafka, fjord);
    if (key !== null) {
      // Named elements are matched by name, so one missing element is one difference. Config
      // entries keep their name in the pattern (a key Fjord lacks is listed by name).
      const byKey = (a: Json[]): Map<string, Json> => new Map(a.map((x) => [JSON.stringify((x as { [k: string]: Json })[key] ?? null), x]));
      const k = byKey(kafka);
      const f = byKey(fjord);
      const named = path[path.length - 1] === 'configs' || path[path.length - 1] === 'synonyms';
      for (const id of new Set([...k.keys(), ...f.keys()])) {
        const seg = JSON.parse(id) as Json;
        diff(k.get(id), f.get(id), [...path, named ? String(seg) : `#${String(seg)}`], out);
      }
      return out;
    }
    if (kafka.length !== fjord.length) {
      push(out, [...path, 'length'], kafka.length, fjord.length);
    }
    const n = Math.min(kafka.length, fjord.length);
    for (let i = 0; i < n; i++) diff(kafka[i], fjord[i], [...path, String(i)], out);
    return out;
  }
  if ((kafka === undefined) !== (fjord === undefined) && (both(kafka) || both(fjord))) {
    // A whole element on one side only: one difference, not one per field.
    push(out, path, kafka === undefined ? undefined : 'present', fjord === undefined ? undefined : 'present');
    return out;
  }
  if (both(kafka) && both(fjord)) {
    for (const k of new Set([...Object.keys(kafka), ...Object.keys(fjord)])) diff(kafka[k], fjord[k], [...path, k], out);
    return out;
  }
  if (JSON.stringify(kafka) !== JSON.stringify(fjord)) push(out, path, kafka, fjord);
  return out;
}

/** The field that names the elements of both arrays (unique on each side), or null. */
function identityKey(a: Json[], b: Json[]): string | null {
  const all = [...a, ...b];
  if (all.length === 0 || !all.every((x) => x !== null && typeof x === 'object' && !Array.isArray(x))) return null;
  const objs = all as { [k: string]: Json }[];
  for (const k of ['name', 'topic', 'topicName', 'resourceName', 'groupId', 'transactionalId', 'partitionIndex', 'partitionId', 'partition', 'apiKey', 'configName']) {
    if (!objs.every((o) => k in o)) continue;
    const unique = (arr: Json[]): boolean => new Set(arr.map((x) => JSON.stringify((x as { [kk: string]: Json })[k]))).size === arr.length;
    if (unique(a) && unique(b)) return k;
  }
  return null;
}

function push(out: Difference[], path: string[], kafka: Json | undefined, fjord: Json | undefined): void {
  out.push({ path: path.join('.'), pattern: path.map((s) => (/^\d+$/.test(s) || s.startsWith('#') ? '*' : s)).join('.'), kafka, fjord });
}
