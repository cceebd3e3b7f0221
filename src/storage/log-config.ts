/**
 * Per-topic log configuration, by Kafka's topic config keys with Kafka's defaults. Long.MAX_VALUE
 * defaults are Number.MAX_SAFE_INTEGER here (every duration or size a log meets fits in 2^53).
 */
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

const LONG_MAX = Number.MAX_SAFE_INTEGER;

export const DEFAULT_LOG_CONFIG: LogConfig = Object.freeze({
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * 24 * 60 * 60 * 1000,
  segmentIndexBytes: 10 * 1024 * 1024,
  indexIntervalBytes: 4096,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  retentionBytes: -1,
  cleanupPolicy: Object.freeze(['delete'] as const),
  deleteRetentionMs: 24 * 60 * 60 * 1000,
  minCompactionLagMs: 0,
  maxCompactionLagMs: LONG_MAX,
  minCleanableDirtyRatio: 0.5,
  maxMessageBytes: 1024 * 1024 + 12,
  messageTimestampType: 'CreateTime',
  messageTimestampBeforeMaxMs: LONG_MAX,
  messageTimestampAfterMaxMs: LONG_MAX,
  flushMessages: LONG_MAX,
  flushMs: LONG_MAX,
  fileDeleteDelayMs: 60_000,
});

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

/**
 * Builds a LogConfig from Kafka-keyed string properties over `base` (defaults when omitted).
 * Unknown keys are ignored (they belong to other layers); a malformed value throws.
 */
export function logConfigFromProps(
  props: Readonly<Record<string, string | undefined>>,
  base: LogConfig = DEFAULT_LOG_CONFIG,
): LogConfig {
  const out: Record<string, unknown> = { ...base };
  for (const [key, field] of Object.entries(LOG_CONFIG_KEYS)) {
    const raw = props[key];
    if (raw === undefined) continue;
    if (field === 'cleanupPolicy') {
      const parts = raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
      for (const p of parts) if (p !== 'delete' && p !== 'compact') throw new Error(`invalid ${key}: ${raw}`);
      out[field] = parts;
    } else if (field === 'messageTimestampType') {
      if (raw !== 'CreateTime' && raw !== 'LogAppendTime') throw new Error(`invalid ${key}: ${raw}`);
      out[field] = raw;
    } else {
      const n = Number(raw);
      if (!Number.isFinite(n)) throw new Error(`invalid ${key}: ${raw}`);
      out[field] = Math.min(n, LONG_MAX);
    }
  }
  return out as unknown as LogConfig;
}

export function logConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return { ...DEFAULT_LOG_CONFIG, ...overrides };
}
