/**
 * Configuration of cluster mirroring (KIP-1279 spec §6): the CLUSTER_MIRROR resource keys a
 * mirror accepts, their defaults and validation, and the broker-level keys with their defaults.
 */

/** Keys that only filter what is mirrored; changing them does not rebuild connections (§6.2). */
export const FILTER_KEYS: ReadonlySet<string> = new Set([
  'mirror.topics.include',
  'mirror.topics.exclude',
  'mirror.groups.include',
  'mirror.groups.exclude',
  'mirror.acls.include',
]);

type Kind = 'string' | 'list' | 'int' | 'long' | 'password' | 'boolean';

interface KeyDef {
  readonly kind: Kind;
  readonly default: string | null;
  readonly min?: number;
}

const TOPIC_PROPERTIES_EXCLUDE_DEFAULT = [
  'follower.replication.throttled.replicas',
  'leader.replication.throttled.replicas',
  'message.timestamp.difference.max.ms',
  'log.message.timestamp.before.max.ms',
  'log.message.timestamp.after.max.ms',
  'message.timestamp.type',
  'unclean.leader.election.enable',
  'min.insync.replicas',
].join(',');

const MIRROR_KEYS: ReadonlyMap<string, KeyDef> = new Map<string, KeyDef>([
  ['bootstrap.servers', { kind: 'list', default: null }],
  ['mirror.source.cluster.id', { kind: 'string', default: null }],
  ['client.id', { kind: 'string', default: null }],
  ['request.timeout.ms', { kind: 'int', default: '30000', min: 0 }],
  ['socket.connection.setup.timeout.ms', { kind: 'long', default: '10000', min: 0 }],
  ['socket.connection.setup.timeout.max.ms', { kind: 'long', default: '30000', min: 0 }],
  ['connections.max.idle.ms', { kind: 'long', default: '540000' }],
  ['mirror.fetch.backoff.ms', { kind: 'int', default: '1000', min: 0 }],
  ['mirror.fetch.wait.max.ms', { kind: 'int', default: '1000', min: 0 }],
  ['mirror.fetch.min.bytes', { kind: 'int', default: '1', min: 0 }],
  ['mirror.fetch.response.max.bytes', { kind: 'int', default: String(10 * 1024 * 1024), min: 0 }],
  ['mirror.fetch.max.bytes', { kind: 'int', default: String(1024 * 1024), min: 0 }],
  ['mirror.socket.timeout.ms', { kind: 'int', default: '30000', min: 0 }],
  ['mirror.socket.receive.buffer.bytes', { kind: 'int', default: String(64 * 1024) }],
  ['security.protocol', { kind: 'string', default: 'PLAINTEXT' }],
  ['sasl.mechanism', { kind: 'string', default: 'PLAIN' }],
  ['sasl.jaas.config', { kind: 'password', default: null }],
  ['ssl.truststore.location', { kind: 'string', default: null }],
  ['ssl.truststore.type', { kind: 'string', default: 'JKS' }],
  ['ssl.truststore.certificates', { kind: 'password', default: null }],
  ['ssl.truststore.password', { kind: 'password', default: null }],
  ['ssl.keystore.location', { kind: 'string', default: null }],
  ['ssl.keystore.type', { kind: 'string', default: 'JKS' }],
  ['ssl.keystore.certificate.chain', { kind: 'password', default: null }],
  ['ssl.keystore.key', { kind: 'password', default: null }],
  ['ssl.keystore.password', { kind: 'password', default: null }],
  ['ssl.key.password', { kind: 'password', default: null }],
  ['ssl.endpoint.identification.algorithm', { kind: 'string', default: 'https' }],
  ['mirror.topic.properties.exclude', { kind: 'list', default: TOPIC_PROPERTIES_EXCLUDE_DEFAULT }],
  ['mirror.topics.include', { kind: 'list', default: '' }],
  ['mirror.topics.exclude', { kind: 'list', default: '__.*' }],
  ['mirror.groups.include', { kind: 'list', default: '.*' }],
  ['mirror.groups.exclude', { kind: 'list', default: '' }],
  ['mirror.acls.include', { kind: 'list', default: '*' }],
]);

export function mirrorConfigKeys(): readonly string[] {
  return [...MIRROR_KEYS.keys()];
}

export function mirrorConfigDefault(key: string): string | null {
  return MIRROR_KEYS.get(key)?.default ?? null;
}

export function isSensitiveMirrorKey(key: string): boolean {
  return MIRROR_KEYS.get(key)?.kind === 'password';
}

/** A mirror name follows the topic-name rules (spec §4.3, AS3). */
export function validateMirrorName(name: string): string | null {
  if (name.length === 0) return 'the mirror name is empty';
  if (name.length > 249) return 'the mirror name is longer than 249 characters';
  if (name === '.' || name === '..') return `'${name}' is not a valid mirror name`;
  if (!/^[A-Za-z0-9._-]+$/.test(name)) return `mirror name '${name}' has characters other than [A-Za-z0-9._-]`;
  return null;
}

/** Validates one key/value of a mirror's config; returns an error message or null. */
export function validateMirrorConfigEntry(key: string, value: string | null): string | null {
  const def = MIRROR_KEYS.get(key);
  if (def === undefined) return `unknown cluster mirror config '${key}'`;
  if (value === null) {
    if (key === 'bootstrap.servers' || key === 'mirror.source.cluster.id') return `'${key}' cannot be deleted`;
    return null;
  }
  switch (def.kind) {
    case 'int':
    case 'long': {
      if (!/^-?\d+$/.test(value.trim())) return `'${key}' must be an integer, got '${value}'`;
      const n = Number(value);
      if (def.min !== undefined && n < def.min) return `'${key}' must be at least ${def.min}`;
      return null;
    }
    case 'boolean':
      return value === 'true' || value === 'false' ? null : `'${key}' must be true or false`;
    case 'list':
      if (key === 'bootstrap.servers') {
        const parts = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
        if (parts.length === 0) return 'bootstrap.servers is empty';
        for (const p of parts) if (!/^.+:\d{1,5}$/.test(p)) return `bootstrap.servers entry '${p}' is not host:port`;
        return null;
      }
      if (key.startsWith('mirror.topics.') || key.startsWith('mirror.groups.')) {
        for (const p of splitList(value)) {
          try {
            new RegExp(`^(?:${p})$`);
          } catch {
            return `'${key}' has an invalid regular expression '${p}'`;
          }
        }
      }
      return null;
    default:
      if (key === 'security.protocol' && !['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'].includes(value.toUpperCase())) {
        return `security.protocol '${value}' is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL`;
      }
      return null;
  }
}

export function splitList(v: string | undefined | null): string[] {
  if (v === undefined || v === null) return [];
  return v.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

/** The value of a key, or its default. */
export function mirrorConfigValue(cfg: ReadonlyMap<string, string>, key: string): string | null {
  return cfg.get(key) ?? mirrorConfigDefault(key);
}

/** A fingerprint of the keys that affect connections: a change rebuilds fetchers (§6.2). */
export function connectionFingerprint(cfg: ReadonlyMap<string, string>): string {
  return [...cfg]
    .filter(([k]) => !FILTER_KEYS.has(k))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
}

export function matchesAny(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => {
    try {
      return new RegExp(`^(?:${p})$`).test(name);
    } catch {
      return false;
    }
  });
}

/** Broker configs of spec §6.1 with their defaults. */
export interface MirrorBrokerConfig {
  readonly stateTopicPartitions: number;
  readonly metadataRefreshIntervalMs: number;
  readonly failedRetryInitialBackoffMs: number;
  readonly failedRetryMaxBackoffMs: number;
  readonly failedRetryMaxAttempts: number;
  readonly numReplicaFetchers: number;
  readonly fetchBackoffMs: number;
  readonly fetchWaitMaxMs: number;
  readonly fetchMinBytes: number;
  readonly fetchResponseMaxBytes: number;
  readonly fetchMaxBytes: number;
  readonly socketTimeoutMs: number;
}

export function mirrorBrokerConfig(get: (key: string) => string | undefined): MirrorBrokerConfig {
  const num = (k: string, d: number): number => {
    const v = get(k);
    if (v === undefined) return d;
    const n = Number(v);
    return Number.isFinite(n) ? n : d;
  };
  return {
    stateTopicPartitions: num('mirror.state.topic.num.partitions', 50),
    metadataRefreshIntervalMs: num('mirror.metadata.refresh.interval.ms', 60_000),
    failedRetryInitialBackoffMs: num('mirror.failed.retry.initial.backoff.ms', 1000),
    failedRetryMaxBackoffMs: num('mirror.failed.retry.max.backoff.ms', 300_000),
    failedRetryMaxAttempts: num('mirror.failed.retry.max.attempts', 100),
    numReplicaFetchers: num('mirror.num.replica.fetchers', 1),
    fetchBackoffMs: num('mirror.fetch.backoff.ms', 1000),
    fetchWaitMaxMs: num('mirror.fetch.wait.max.ms', 1000),
    fetchMinBytes: num('mirror.fetch.min.bytes', 1),
    fetchResponseMaxBytes: num('mirror.fetch.response.max.bytes', 10 * 1024 * 1024),
    fetchMaxBytes: num('mirror.fetch.max.bytes', 1024 * 1024),
    socketTimeoutMs: num('mirror.socket.timeout.ms', 30_000),
  };
}
