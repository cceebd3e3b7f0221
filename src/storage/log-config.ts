/**
 * Per-topic log configuration, by Kafka's topic config keys (Kafka's `LogConfig`), with the
 * defaults of the config registry. Long.MAX_VALUE is Number.MAX_SAFE_INTEGER here (every duration
 * or size a log meets fits in 2^53).
 */
import { ConfigError } from '../config/config-error.js';
import { topicDefaults } from '../config/topic-config-defs.js';

export interface LogConfig {
  readonly segmentBytes: number;
  readonly segmentMs: number;
  readonly segmentIndexBytes: number;
  readonly indexIntervalBytes: number;
  readonly retentionMs: number;
  readonly retentionBytes: number;
  readonly cleanupPolicy: readonly ('delete' | 'compact')[];
  readonly deleteRetentionMs: number;
  readonly minCompactionLagMs: number;
  readonly maxCompactionLagMs: number;
  readonly minCleanableDirtyRatio: number;
  readonly maxMessageBytes: number;
  readonly messageTimestampType: 'CreateTime' | 'LogAppendTime';
  readonly messageTimestampBeforeMaxMs: number;
  readonly messageTimestampAfterMaxMs: number;
  readonly flushMessages: number;
  readonly flushMs: number;
  readonly fileDeleteDelayMs: number;
}

/** Kafka topic config key → LogConfig field, for the keys this log honours. */
export const LOG_CONFIG_KEYS = {
  'segment.bytes': 'segmentBytes',
  'segment.ms': 'segmentMs',
  'segment.index.bytes': 'segmentIndexBytes',
  'index.interval.bytes': 'indexIntervalBytes',
  'retention.ms': 'retentionMs',
  'retention.bytes': 'retentionBytes',
  'cleanup.policy': 'cleanupPolicy',
  'delete.retention.ms': 'deleteRetentionMs',
  'min.compaction.lag.ms': 'minCompactionLagMs',
  'max.compaction.lag.ms': 'maxCompactionLagMs',
  'min.cleanable.dirty.ratio': 'minCleanableDirtyRatio',
  'max.message.bytes': 'maxMessageBytes',
  'message.timestamp.type': 'messageTimestampType',
  'message.timestamp.before.max.ms': 'messageTimestampBeforeMaxMs',
  'message.timestamp.after.max.ms': 'messageTimestampAfterMaxMs',
  'flush.messages': 'flushMessages',
  'flush.ms': 'flushMs',
  'file.delete.delay.ms': 'fileDeleteDelayMs',
} as const satisfies Record<string, keyof LogConfig>;

export type LogConfigKey = keyof typeof LOG_CONFIG_KEYS;

const LONG_MAX = Number.MAX_SAFE_INTEGER;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Parses one topic property into its LogConfig field; a malformed value throws. */
function setField(out: Mutable<LogConfig>, key: LogConfigKey, raw: string): void {
  const field = LOG_CONFIG_KEYS[key];
  if (field === 'cleanupPolicy') {
    const parts = raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    const policies: ('delete' | 'compact')[] = [];
    for (const p of parts) {
      if (p !== 'delete' && p !== 'compact') throw new ConfigError(`invalid ${key}: ${raw}`);
      policies.push(p);
    }
    out.cleanupPolicy = policies;
  } else if (field === 'messageTimestampType') {
    if (raw !== 'CreateTime' && raw !== 'LogAppendTime') throw new ConfigError(`invalid ${key}: ${raw}`);
    out.messageTimestampType = raw;
  } else {
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new ConfigError(`invalid ${key}: ${raw}`);
    out[field] = Math.min(n, LONG_MAX);
  }
}

const LOG_KEYS = Object.keys(LOG_CONFIG_KEYS) as LogConfigKey[];

/**
 * The log configuration of a topic on an unconfigured broker: the topic defaults of the config
 * registry (themselves the broker defaults), parsed once.
 */
export const DEFAULT_LOG_CONFIG: LogConfig = (() => {
  const defaults = topicDefaults();
  const out = {} as Mutable<LogConfig>;
  for (const key of LOG_KEYS) {
    const raw = defaults[key];
    if (raw === undefined) throw new Error(`topic config ${key} has no default`);
    setField(out, key, raw);
  }
  out.cleanupPolicy = Object.freeze([...out.cleanupPolicy]);
  // The one departure from the registry: Kafka 4 refuses timestamps more than an hour ahead (the
  // broker default, which every topic's log gets through its topic configs). A log opened without
  // a topic's configs (the controller's metadata log, logs driven by a manual clock) keeps Kafka
  // 3's unbounded default, since its clock need not be the producers' wall clock.
  out.messageTimestampAfterMaxMs = LONG_MAX;
  return Object.freeze(out);
})();

/**
 * Builds a LogConfig from Kafka-keyed string properties over `base` (defaults when omitted).
 * Unknown keys are ignored (they belong to other layers); a malformed value throws.
 */
export function logConfigFromProps(
  props: Readonly<Record<string, string | undefined>>,
  base: LogConfig = DEFAULT_LOG_CONFIG,
): LogConfig {
  const out: Mutable<LogConfig> = { ...base };
  for (const key of LOG_KEYS) {
    const raw = props[key];
    if (raw !== undefined) setField(out, key, raw);
  }
  return out;
}

export function logConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return { ...DEFAULT_LOG_CONFIG, ...overrides };
}
