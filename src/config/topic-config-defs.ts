/**
 * Topic-level keys (Kafka's `TopicConfig` / `LogConfig`). A key with a broker synonym (Kafka's
 * `ServerTopicConfigSynonyms`) takes its type, bound, choices and default from the broker key, so
 * a topic default is never restated here; only keys without a broker synonym carry their own.
 * Where LogConfig bounds a topic key more tightly than its broker key (`atLeast`, `between`), the
 * entry states the topic bound; Kafka 4.1.2 refuses values beyond it with INVALID_CONFIG.
 */
import { brokerDef } from './broker-config-defs.js';
import { LONG_MAX, configDef, indexDefs, type ConfigDef, type ConfigOptions, type ConfigType } from './config-def.js';

/** A topic key whose default is the broker key's value. */
function synonym(name: string, brokerKey: string, options: ConfigOptions & { readonly defaultValue?: string } = {}): ConfigDef {
  const b = brokerDef(brokerKey);
  const { defaultValue, ...rest } = options;
  return configDef('TOPIC', name, b.type, defaultValue ?? b.defaultValue, {
    ...(b.min !== undefined ? { min: b.min } : {}),
    ...(b.oneOf !== undefined ? { oneOf: b.oneOf } : {}),
    ...rest,
    brokerKey,
  });
}

const own = (name: string, type: ConfigType, defaultValue: string, options: ConfigOptions = {}): ConfigDef => configDef('TOPIC', name, type, defaultValue, options);

/** `<n>` hours of a broker key's default, in ms: Kafka's fallback from `log.*.ms` to `log.*.hours`. */
const hoursDefaultMs = (brokerKey: string): string => String(Number(brokerDef(brokerKey).defaultValue) * 3_600_000);

// An empty list is accepted (Kafka 4.x: neither deletion nor compaction).
const cleanupPolicy = (value: string): string | null =>
  value.trim() === '' ||
  value
    .split(',')
    .map((s) => s.trim())
    .every((p) => p === 'delete' || p === 'compact')
    ? null
    : `Invalid value ${value} for configuration cleanup.policy`;

const compressionType = (choices: readonly string[]) => (value: string): string | null =>
  choices.includes(value) ? null : `Invalid value ${value} for configuration compression.type`;

/**
 * Kafka's ThrottledReplicaListValidator: `*`, or `partition:broker` pairs. kafka-reassign-partitions
 * sets these keys with `--throttle` and deletes them on `--verify`.
 */
const throttledReplicas = (name: string) => (value: string): string | null => {
  const entries = value.split(',').map((s) => s.trim());
  return (entries.length === 1 && entries[0] === '*') || entries.every((e) => /^(\d+:\d+)?$/.test(e))
    ? null
    : `${name} must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...`;
};

export const TOPIC_CONFIG_DEFS: readonly ConfigDef[] = [
  synonym('cleanup.policy', 'log.cleanup.policy', { validate: cleanupPolicy }),
  synonym('compression.type', 'compression.type', { validate: compressionType(brokerDef('compression.type').oneOf ?? []) }),
  synonym('delete.retention.ms', 'log.cleaner.delete.retention.ms', { min: 0 }),
  synonym('file.delete.delay.ms', 'log.segment.delete.delay.ms', { min: 0 }),
  configDef('TOPIC', 'follower.replication.throttled.replicas', 'list', '', { validate: throttledReplicas('follower.replication.throttled.replicas') }),
  synonym('flush.messages', 'log.flush.interval.messages'),
  // log.flush.interval.ms has no default; Kafka then flushes on the scheduler's interval.
  synonym('flush.ms', 'log.flush.interval.ms', { defaultValue: brokerDef('log.flush.scheduler.interval.ms').defaultValue ?? LONG_MAX, min: 0 }),
  synonym('index.interval.bytes', 'log.index.interval.bytes'),
  configDef('TOPIC', 'leader.replication.throttled.replicas', 'list', '', { validate: throttledReplicas('leader.replication.throttled.replicas') }),
  synonym('max.compaction.lag.ms', 'log.cleaner.max.compaction.lag.ms'),
  synonym('max.message.bytes', 'message.max.bytes'),
  synonym('message.timestamp.after.max.ms', 'log.message.timestamp.after.max.ms'),
  synonym('message.timestamp.before.max.ms', 'log.message.timestamp.before.max.ms'),
  synonym('message.timestamp.type', 'log.message.timestamp.type'),
  synonym('min.cleanable.dirty.ratio', 'log.cleaner.min.cleanable.ratio', { min: 0, max: 1 }),
  synonym('min.compaction.lag.ms', 'log.cleaner.min.compaction.lag.ms', { min: 0 }),
  synonym('min.insync.replicas', 'min.insync.replicas'),
  // KIP-1279: a mirror partition's LOG_TRUNCATION waits for every assigned replica, not just the ISR.
  own('mirror.support.unclean.leader.election', 'boolean', 'false'),
  synonym('preallocate', 'log.preallocate'),
  synonym('retention.bytes', 'log.retention.bytes'),
  // log.retention.ms and log.roll.ms have no default of their own: the hours keys supply it.
  synonym('retention.ms', 'log.retention.ms', { defaultValue: hoursDefaultMs('log.retention.hours'), min: -1 }),
  synonym('segment.bytes', 'log.segment.bytes'),
  synonym('segment.index.bytes', 'log.index.size.max.bytes'),
  own('segment.jitter.ms', 'long', '0', { min: 0 }),
  synonym('segment.ms', 'log.roll.ms', { defaultValue: hoursDefaultMs('log.roll.hours'), min: 1 }),
  synonym('unclean.leader.election.enable', 'unclean.leader.election.enable'),
];

export const TOPIC_DEFS: ReadonlyMap<string, ConfigDef> = indexDefs(TOPIC_CONFIG_DEFS);

/** Every topic key with its static default: what a topic gets from an unconfigured broker. */
export function topicDefaults(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of TOPIC_CONFIG_DEFS) if (d.defaultValue !== null) out[d.name] = d.defaultValue;
  return out;
}
