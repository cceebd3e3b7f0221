/**
 * Node configuration with Kafka's own keys and defaults (as in Apache Kafka 4.x
 * `KafkaConfig`/`ServerLogConfigs`). Values are kept as strings in a map so DescribeConfigs can
 * report them verbatim; typed getters parse them. Unknown keys are accepted with a warning (Kafka
 * does the same: "These configurations ... were supplied but are not used yet"); a value that does
 * not parse or is out of range refuses to start.
 */

export type ConfigType = 'int' | 'long' | 'boolean' | 'string' | 'list' | 'double' | 'password';

export interface ConfigDef {
  readonly name: string;
  readonly type: ConfigType;
  /** Kafka's default, as a string; null when Kafka has none. */
  readonly defaultValue: string | null;
  readonly min?: number;
  readonly oneOf?: readonly string[];
  /** Applies to topics as this topic-level key (DescribeConfigs shows the broker default). */
  readonly topicKey?: string;
  readonly readOnly?: boolean;
}

const LONG_MAX = '9223372036854775807';

const D = (
  name: string,
  type: ConfigType,
  defaultValue: string | null,
  extra: Partial<Omit<ConfigDef, 'name' | 'type' | 'defaultValue'>> = {},
): ConfigDef => ({ name, type, defaultValue, ...extra });

/** Broker keys this node understands (or accepts as harmless, e.g. replication settings of a one-node cluster). */
export const BROKER_CONFIG_DEFS: readonly ConfigDef[] = [
  D('node.id', 'int', '1', { min: 0, readOnly: true }),
  D('broker.id', 'int', '-1', { readOnly: true }),
  D('process.roles', 'list', 'broker,controller', { readOnly: true }),
  D('listeners', 'list', 'PLAINTEXT://127.0.0.1:9092', { readOnly: true }),
  D('advertised.listeners', 'list', null, { readOnly: true }),
  D('listener.security.protocol.map', 'list', 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT', { readOnly: true }),
  D('inter.broker.listener.name', 'string', null, { readOnly: true }),
  D('controller.listener.names', 'list', null, { readOnly: true }),
  D('controller.quorum.voters', 'list', '', { readOnly: true }),
  D('controller.quorum.bootstrap.servers', 'list', '', { readOnly: true }),
  D('log.dirs', 'list', null, { readOnly: true }),
  D('log.dir', 'list', './data', { readOnly: true }),
  D('metadata.log.dir', 'string', null, { readOnly: true }),
  D('num.partitions', 'int', '1', { min: 1 }),
  D('default.replication.factor', 'int', '1', { min: 1 }),
  D('min.insync.replicas', 'int', '1', { min: 1, topicKey: 'min.insync.replicas' }),
  D('auto.create.topics.enable', 'boolean', 'true'),
  D('delete.topic.enable', 'boolean', 'true'),
  D('message.max.bytes', 'int', '1048588', { min: 0, topicKey: 'max.message.bytes' }),
  D('socket.request.max.bytes', 'int', '104857600', { min: 1, readOnly: true }),
  D('socket.send.buffer.bytes', 'int', '102400'),
  D('socket.receive.buffer.bytes', 'int', '102400'),
  D('connections.max.idle.ms', 'long', '600000', { readOnly: true }),
  D('queued.max.requests', 'int', '500', { min: 1 }),
  D('num.network.threads', 'int', '3', { min: 1 }),
  D('num.io.threads', 'int', '8', { min: 1 }),
  D('num.recovery.threads.per.data.dir', 'int', '2', { min: 1 }),
  D('log.segment.bytes', 'int', '1073741824', { min: 14, topicKey: 'segment.bytes' }),
  D('log.roll.ms', 'long', null, { topicKey: 'segment.ms' }),
  D('log.roll.hours', 'int', '168', { min: 1 }),
  D('log.retention.ms', 'long', null, { topicKey: 'retention.ms' }),
  D('log.retention.minutes', 'int', null),
  D('log.retention.hours', 'int', '168'),
  D('log.retention.bytes', 'long', '-1', { topicKey: 'retention.bytes' }),
  D('log.retention.check.interval.ms', 'long', '300000', { min: 1 }),
  D('log.cleanup.policy', 'list', 'delete', { topicKey: 'cleanup.policy' }),
  D('log.cleaner.enable', 'boolean', 'true'),
  D('log.cleaner.backoff.ms', 'long', '15000', { min: 0 }),
  D('log.cleaner.delete.retention.ms', 'long', '86400000', { topicKey: 'delete.retention.ms' }),
  D('log.cleaner.min.compaction.lag.ms', 'long', '0', { topicKey: 'min.compaction.lag.ms' }),
  D('log.cleaner.min.cleanable.ratio', 'double', '0.5', { topicKey: 'min.cleanable.dirty.ratio' }),
  D('log.index.interval.bytes', 'int', '4096', { min: 0, topicKey: 'index.interval.bytes' }),
  D('log.index.size.max.bytes', 'int', '10485760', { min: 4, topicKey: 'segment.index.bytes' }),
  D('log.flush.interval.messages', 'long', LONG_MAX, { min: 1, topicKey: 'flush.messages' }),
  D('log.flush.interval.ms', 'long', null, { topicKey: 'flush.ms' }),
  D('log.flush.scheduler.interval.ms', 'long', LONG_MAX),
  D('log.segment.delete.delay.ms', 'long', '60000', { topicKey: 'file.delete.delay.ms' }),
  D('log.message.timestamp.type', 'string', 'CreateTime', {
    oneOf: ['CreateTime', 'LogAppendTime'],
    topicKey: 'message.timestamp.type',
  }),
  D('log.message.timestamp.before.max.ms', 'long', LONG_MAX, { min: 0, topicKey: 'message.timestamp.before.max.ms' }),
  D('log.message.timestamp.after.max.ms', 'long', '3600000', { min: 0, topicKey: 'message.timestamp.after.max.ms' }),
  D('log.preallocate', 'boolean', 'false', { topicKey: 'preallocate' }),
  D('compression.type', 'string', 'producer', {
    oneOf: ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'],
    topicKey: 'compression.type',
  }),
  D('unclean.leader.election.enable', 'boolean', 'false', { topicKey: 'unclean.leader.election.enable' }),
  D('offsets.topic.num.partitions', 'int', '50', { min: 1, readOnly: true }),
  D('offsets.topic.replication.factor', 'int', '3', { min: 1 }),
  D('offsets.topic.segment.bytes', 'int', '104857600', { min: 1 }),
  D('offsets.retention.minutes', 'int', '10080', { min: 1 }),
  D('offsets.retention.check.interval.ms', 'long', '600000', { min: 1 }),
  D('offsets.commit.timeout.ms', 'int', '5000', { min: 1 }),
  D('offsets.load.buffer.size', 'int', '5242880', { min: 1 }),
  D('offset.metadata.max.bytes', 'int', '4096'),
  D('group.initial.rebalance.delay.ms', 'int', '3000', { min: 0 }),
  D('group.min.session.timeout.ms', 'int', '6000'),
  D('group.max.session.timeout.ms', 'int', '1800000'),
  D('group.max.size', 'int', '2147483647', { min: 1 }),
  D('group.coordinator.rebalance.protocols', 'list', 'classic,consumer,streams'),
  D('group.consumer.session.timeout.ms', 'int', '45000', { min: 1 }),
  D('group.consumer.min.session.timeout.ms', 'int', '45000', { min: 1 }),
  D('group.consumer.max.session.timeout.ms', 'int', '60000', { min: 1 }),
  D('group.consumer.heartbeat.interval.ms', 'int', '5000', { min: 1 }),
  D('group.consumer.min.heartbeat.interval.ms', 'int', '5000', { min: 1 }),
  D('group.consumer.max.heartbeat.interval.ms', 'int', '15000', { min: 1 }),
  D('group.consumer.max.size', 'int', '2147483647', { min: 1 }),
  D('group.consumer.assignors', 'list', 'uniform,range'),
  D('transaction.state.log.num.partitions', 'int', '50', { min: 1, readOnly: true }),
  D('transaction.state.log.replication.factor', 'int', '3', { min: 1 }),
  D('transaction.state.log.min.isr', 'int', '2', { min: 1 }),
  D('transaction.state.log.segment.bytes', 'int', '104857600', { min: 1 }),
  D('transaction.max.timeout.ms', 'int', '900000', { min: 1 }),
  D('transactional.id.expiration.ms', 'int', '604800000', { min: 1 }),
  D('transaction.abort.timed.out.transaction.cleanup.interval.ms', 'int', '10000', { min: 1 }),
  D('transaction.remove.expired.transaction.cleanup.interval.ms', 'int', '3600000', { min: 1 }),
  D('producer.id.expiration.ms', 'int', '86400000', { min: 1 }),
  D('producer.id.expiration.check.interval.ms', 'int', '600000', { min: 1 }),
  D('max.incremental.fetch.session.cache.slots', 'int', '1000', { min: 0 }),
  D('fetch.max.bytes', 'int', '57671680', { min: 1024 }),
  D('replica.fetch.max.bytes', 'int', '1048576'),
  D('unstable.api.versions.enable', 'boolean', 'false'),
  // Cluster mirroring (KIP-1279 broker configs); src/mirror reads them through the coordinator
  // host's config lookup (mirrorBrokerConfig), so defaults and validation live here.
  D('mirror.state.topic.num.partitions', 'int', '50', { min: 1 }),
  D('mirror.state.topic.replication.factor', 'int', '3', { min: 1 }),
  D('mirror.num.replica.fetchers', 'int', '1', { min: 1 }),
  D('mirror.metadata.refresh.interval.ms', 'long', '60000', { min: 1 }),
  D('mirror.failed.retry.initial.backoff.ms', 'long', '1000', { min: 0 }),
  D('mirror.failed.retry.max.backoff.ms', 'long', '300000', { min: 0 }),
  D('mirror.failed.retry.max.attempts', 'int', '100', { min: 0 }),
  D('mirror.fetch.backoff.ms', 'int', '1000', { min: 0 }),
  D('mirror.fetch.wait.max.ms', 'int', '1000', { min: 0 }),
  D('mirror.fetch.min.bytes', 'int', '1', { min: 0 }),
  D('mirror.fetch.response.max.bytes', 'int', String(10 * 1024 * 1024), { min: 0 }),
  D('mirror.fetch.max.bytes', 'int', String(1024 * 1024), { min: 0 }),
  D('mirror.socket.timeout.ms', 'int', '30000', { min: 0 }),
  D('mirror.socket.receive.buffer.bytes', 'int', String(64 * 1024)),
  D('mirror.admin.listener.name', 'string', null),
  D('sasl.mechanism.mirror.admin.protocol', 'string', null),
  D('metrics.listener', 'string', null, { readOnly: true }),
  D('log.format', 'string', 'json', { oneOf: ['json', 'text'], readOnly: true }),
  D('fjord.slow.request.ms', 'long', '-1', { readOnly: true }),
];

/**
 * Topic-level keys with the broker key that supplies their default (Kafka's
 * `ServerTopicConfigSynonyms`). Keys with a null broker synonym default to the value given here.
 */
export const TOPIC_CONFIG_DEFS: readonly { name: string; type: ConfigType; brokerKey: string | null; defaultValue: string | null; oneOf?: readonly string[] }[] = [
  { name: 'cleanup.policy', type: 'list', brokerKey: 'log.cleanup.policy', defaultValue: null },
  { name: 'compression.type', type: 'string', brokerKey: 'compression.type', defaultValue: null },
  { name: 'delete.retention.ms', type: 'long', brokerKey: 'log.cleaner.delete.retention.ms', defaultValue: null },
  { name: 'file.delete.delay.ms', type: 'long', brokerKey: 'log.segment.delete.delay.ms', defaultValue: null },
  { name: 'flush.messages', type: 'long', brokerKey: 'log.flush.interval.messages', defaultValue: null },
  { name: 'flush.ms', type: 'long', brokerKey: 'log.flush.interval.ms', defaultValue: LONG_MAX },
  { name: 'index.interval.bytes', type: 'int', brokerKey: 'log.index.interval.bytes', defaultValue: null },
  { name: 'max.compaction.lag.ms', type: 'long', brokerKey: null, defaultValue: LONG_MAX },
  { name: 'max.message.bytes', type: 'int', brokerKey: 'message.max.bytes', defaultValue: null },
  { name: 'message.timestamp.after.max.ms', type: 'long', brokerKey: 'log.message.timestamp.after.max.ms', defaultValue: null },
  { name: 'message.timestamp.before.max.ms', type: 'long', brokerKey: 'log.message.timestamp.before.max.ms', defaultValue: null },
  { name: 'message.timestamp.type', type: 'string', brokerKey: 'log.message.timestamp.type', defaultValue: null, oneOf: ['CreateTime', 'LogAppendTime'] },
  { name: 'min.cleanable.dirty.ratio', type: 'double', brokerKey: 'log.cleaner.min.cleanable.ratio', defaultValue: null },
  { name: 'min.compaction.lag.ms', type: 'long', brokerKey: 'log.cleaner.min.compaction.lag.ms', defaultValue: null },
  { name: 'min.insync.replicas', type: 'int', brokerKey: 'min.insync.replicas', defaultValue: null },
  { name: 'preallocate', type: 'boolean', brokerKey: 'log.preallocate', defaultValue: null },
  { name: 'retention.bytes', type: 'long', brokerKey: 'log.retention.bytes', defaultValue: null },
  { name: 'retention.ms', type: 'long', brokerKey: 'log.retention.ms', defaultValue: null },
  { name: 'segment.bytes', type: 'int', brokerKey: 'log.segment.bytes', defaultValue: null },
  { name: 'segment.index.bytes', type: 'int', brokerKey: 'log.index.size.max.bytes', defaultValue: null },
  { name: 'segment.jitter.ms', type: 'long', brokerKey: null, defaultValue: '0' },
  { name: 'segment.ms', type: 'long', brokerKey: 'log.roll.ms', defaultValue: null },
  { name: 'unclean.leader.election.enable', type: 'boolean', brokerKey: 'unclean.leader.election.enable', defaultValue: null },
];

const BROKER_DEFS = new Map(BROKER_CONFIG_DEFS.map((d) => [d.name, d]));
export const TOPIC_DEFS = new Map(TOPIC_CONFIG_DEFS.map((d) => [d.name, d]));

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Checks one value against its type; returns an error message or null. */
export function checkValue(type: ConfigType, value: string, extra: { min?: number; oneOf?: readonly string[] } = {}): string | null {
  switch (type) {
    case 'int':
    case 'long': {
      if (!/^-?\d+$/.test(value.trim())) return `expected an integer, got '${value}'`;
      const n = BigInt(value.trim());
      const [lo, hi] = type === 'int' ? [-(2n ** 31n), 2n ** 31n - 1n] : [-(2n ** 63n), 2n ** 63n - 1n];
      if (n < lo || n > hi) return `${value} is out of range for ${type}`;
      if (extra.min !== undefined && n < BigInt(extra.min)) return `value must be at least ${extra.min}, got ${value}`;
      return null;
    }
    case 'double':
      return Number.isFinite(Number(value)) && value.trim() !== '' ? null : `expected a number, got '${value}'`;
    case 'boolean':
      return /^(true|false)$/i.test(value.trim()) ? null : `expected true or false, got '${value}'`;
    default:
      if (extra.oneOf && !extra.oneOf.includes(value.trim())) return `expected one of ${extra.oneOf.join(', ')}, got '${value}'`;
      return null;
  }
}

export interface Listener {
  readonly name: string;
  readonly host: string;
  readonly port: number;
}

function parseListeners(value: string, key: string): Listener[] {
  const out: Listener[] = [];
  for (const part of value.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([A-Za-z0-9_]+):\/\/(\[[^\]]*\]|[^:]*):(\d+)$/.exec(part);
    if (!m) throw new ConfigError(`Invalid value '${part}' for ${key}: expected NAME://host:port`);
    const port = Number(m[3]);
    if (port > 65535) throw new ConfigError(`Invalid port ${port} in ${key}`);
    out.push({ name: m[1]!.toUpperCase(), host: m[2]!.replace(/^\[|\]$/g, ''), port });
  }
  if (out.length === 0) throw new ConfigError(`${key} must name at least one listener`);
  return out;
}

export interface ConfigWarning {
  readonly key: string;
  readonly message: string;
}

/**
 * The broker's effective configuration. `explicit` holds what the operator supplied (file,
 * overrides, or AlterConfigs at runtime); everything else comes from the defaults.
 */
export class BrokerConfig {
  private readonly explicit = new Map<string, string>();
  readonly warnings: ConfigWarning[] = [];

  constructor(values: Iterable<[string, string]> = []) {
    for (const [k, v] of values) this.explicit.set(k, v);
    for (const [k, v] of this.explicit) {
      const def = BROKER_DEFS.get(k);
      if (!def) {
        this.warnings.push({ key: k, message: `unknown configuration key '${k}' is ignored` });
        continue;
      }
      const err = checkValue(def.type, v, def);
      if (err) throw new ConfigError(`Invalid value for ${k}: ${err}`);
    }
    // Touch derived values so a bad listener or id refuses to start now, not on first use.
    void this.listeners;
    void this.advertisedListeners;
  }

  /** Explicit value, or the default; undefined for unknown keys and keys without a default. */
  get(key: string): string | undefined {
    return this.explicit.get(key) ?? BROKER_DEFS.get(key)?.defaultValue ?? undefined;
  }
  isExplicit(key: string): boolean {
    return this.explicit.has(key);
  }
  explicitEntries(): IterableIterator<[string, string]> {
    return this.explicit.entries();
  }
  /** Runtime change (AlterConfigs on the broker resource); null deletes the override. */
  set(key: string, value: string | null): void {
    if (value === null) this.explicit.delete(key);
    else this.explicit.set(key, value);
  }

  int(key: string): number {
    const v = this.get(key);
    if (v === undefined) throw new ConfigError(`${key} has no value`);
    return Number(v);
  }
  bool(key: string): boolean {
    return this.get(key)?.toLowerCase() === 'true';
  }

  get nodeId(): number {
    return this.int('node.id');
  }
  get listeners(): Listener[] {
    return parseListeners(this.get('listeners') ?? '', 'listeners');
  }
  /** Falls back to `listeners`, replacing a wildcard host by 127.0.0.1 as Kafka would by the canonical host name. */
  get advertisedListeners(): Listener[] {
    const adv = this.get('advertised.listeners');
    const list = adv ? parseListeners(adv, 'advertised.listeners') : this.listeners;
    return list.map((l) => (l.host === '' || l.host === '0.0.0.0' || l.host === '::' ? { ...l, host: '127.0.0.1' } : l));
  }
  get dataDir(): string {
    const dirs = (this.get('log.dirs') ?? this.get('log.dir') ?? './data').split(',').map((s) => s.trim()).filter(Boolean);
    return dirs[0] ?? './data';
  }
  /** log.retention.ms, else minutes, else hours (Kafka's precedence). */
  get retentionMs(): number {
    const ms = this.get('log.retention.ms');
    if (ms !== undefined) return Number(ms);
    const min = this.get('log.retention.minutes');
    if (min !== undefined) return Number(min) * 60_000;
    return this.int('log.retention.hours') * 3_600_000;
  }
  get segmentMs(): number {
    const ms = this.get('log.roll.ms');
    return ms !== undefined ? Number(ms) : this.int('log.roll.hours') * 3_600_000;
  }

  /**
   * The broker-level default for a topic config key, and the broker key it came from (for
   * DescribeConfigs synonyms); undefined for keys Kafka does not know.
   */
  topicDefault(topicKey: string): { value: string | null; brokerKey: string | null; explicit: boolean } | undefined {
    const def = TOPIC_DEFS.get(topicKey);
    if (!def) return undefined;
    if (topicKey === 'retention.ms') {
      return { value: String(this.retentionMs), brokerKey: 'log.retention.ms', explicit: this.isExplicit('log.retention.ms') };
    }
    if (topicKey === 'segment.ms') {
      return { value: String(this.segmentMs), brokerKey: 'log.roll.ms', explicit: this.isExplicit('log.roll.ms') };
    }
    if (def.brokerKey === null) return { value: def.defaultValue, brokerKey: null, explicit: false };
    const v = this.get(def.brokerKey) ?? def.defaultValue;
    return { value: v ?? null, brokerKey: def.brokerKey, explicit: this.isExplicit(def.brokerKey) };
  }
}

export function brokerConfigDef(key: string): ConfigDef | undefined {
  return BROKER_DEFS.get(key);
}

/** Parses Java-properties text: `key=value` or `key: value`, `#`/`!` comments, backslash continuations. */
export function parseProperties(text: string): [string, string][] {
  const out: [string, string][] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.trimStart();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    while (/(^|[^\\])(\\\\)*\\$/.test(line) && i + 1 < lines.length) line = line.slice(0, -1) + lines[++i]!.trimStart();
    const m = /^((?:\\.|[^=:\s])+)\s*[=:\s]\s*(.*)$/.exec(line);
    if (!m) {
      out.push([line.trim(), '']);
      continue;
    }
    out.push([m[1]!.replace(/\\(.)/g, '$1'), m[2]!.trimEnd()]);
  }
  return out;
}

/** Validates a topic-level config value; returns an error message or null. */
export function checkTopicConfig(key: string, value: string | null): string | null {
  const def = TOPIC_DEFS.get(key);
  if (!def) return `Unknown topic config name: ${key}`;
  if (value === null) return null;
  if (key === 'cleanup.policy') {
    const parts = value.split(',').map((s) => s.trim());
    return parts.every((p) => p === 'delete' || p === 'compact') ? null : `Invalid value ${value} for configuration cleanup.policy`;
  }
  if (key === 'compression.type') {
    return ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'].includes(value) ? null : `Invalid value ${value} for configuration compression.type`;
  }
  const extra = def.oneOf ? { oneOf: def.oneOf } : {};
  const err = checkValue(def.type, value, extra);
  return err ? `Invalid value ${value} for configuration ${key}: ${err}` : null;
}
