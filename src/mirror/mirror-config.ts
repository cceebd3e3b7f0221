/**
 * Configuration of cluster mirroring (KIP-1279 spec §6): lookups over the CLUSTER_MIRROR table of
 * the config registry (keys, defaults, validation), the filters a mirror applies, and the
 * broker-level §6.1 keys read with the broker table's defaults.
 */
import { clientOptionsFromConfig } from '../client/client-options.js';
import { brokerDefaultNumber } from '../config/broker-config-defs.js';
import { splitList } from '../config/config-def.js';
import { MIRROR_CONFIG_DEFS, MIRROR_DEFS } from '../config/mirror-config-defs.js';

/** Keys that only filter what is mirrored; changing them does not rebuild connections (§6.2). */
const FILTER_KEYS: ReadonlySet<string> = new Set([
  'mirror.topics.include',
  'mirror.topics.exclude',
  'mirror.groups.include',
  'mirror.groups.exclude',
  'mirror.acls.include',
  'mirror.groups.sync.enabled',
]);

export function mirrorConfigKeys(): readonly string[] {
  return MIRROR_CONFIG_DEFS.map((d) => d.name);
}

export function mirrorConfigDefault(key: string): string | null {
  return MIRROR_DEFS.get(key)?.defaultValue ?? null;
}

export function isSensitiveMirrorKey(key: string): boolean {
  return MIRROR_DEFS.get(key)?.sensitive === true;
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
  const def = MIRROR_DEFS.get(key);
  if (def === undefined) return `unknown cluster mirror config '${key}'`;
  if (value === null) return def.required === true ? `'${key}' cannot be deleted` : null;
  switch (def.type) {
    case 'int':
    case 'long': {
      if (!/^-?\d+$/.test(value.trim())) return `'${key}' must be an integer, got '${value}'`;
      const n = Number(value);
      if (def.min !== undefined && n < def.min) return `'${key}' must be at least ${def.min}`;
      return null;
    }
    case 'boolean':
      return value === 'true' || value === 'false' ? null : `'${key}' must be true or false`;
    default:
      return def.validate?.(value) ?? null;
  }
}

export { splitList };

/** The value of a key, or its default. */
export function mirrorConfigValue(cfg: ReadonlyMap<string, string>, key: string): string | null {
  return cfg.get(key) ?? mirrorConfigDefault(key);
}

/**
 * Whether the source connection settings can be used as a whole (the security protocol has what
 * it needs: a JAAS login for SASL, readable key and trust stores for TLS); an error message or
 * null. Checked at create and alter so a mirror is never left with settings it cannot connect
 * with, as Kafka's admin client refuses such configs when it is built.
 */
export function validateMirrorConnection(cfg: ReadonlyMap<string, string>): string | null {
  try {
    clientOptionsFromConfig(cfg, 'fjord-mirror');
    return null;
  } catch (err) {
    return (err as Error).message;
  }
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

/** Reads the §6.1 broker keys; a missing or malformed value takes the registry's default. */
export function mirrorBrokerConfig(get: (key: string) => string | undefined): MirrorBrokerConfig {
  const num = (k: string): number => {
    const v = get(k);
    const n = v === undefined ? NaN : Number(v);
    return Number.isFinite(n) ? n : brokerDefaultNumber(k);
  };
  return {
    stateTopicPartitions: num('mirror.state.topic.num.partitions'),
    metadataRefreshIntervalMs: num('mirror.metadata.refresh.interval.ms'),
    failedRetryInitialBackoffMs: num('mirror.failed.retry.initial.backoff.ms'),
    failedRetryMaxBackoffMs: num('mirror.failed.retry.max.backoff.ms'),
    failedRetryMaxAttempts: num('mirror.failed.retry.max.attempts'),
    numReplicaFetchers: num('mirror.num.replica.fetchers'),
    fetchBackoffMs: num('mirror.fetch.backoff.ms'),
    fetchWaitMaxMs: num('mirror.fetch.wait.max.ms'),
    fetchMinBytes: num('mirror.fetch.min.bytes'),
    fetchResponseMaxBytes: num('mirror.fetch.response.max.bytes'),
    fetchMaxBytes: num('mirror.fetch.max.bytes'),
    socketTimeoutMs: num('mirror.socket.timeout.ms'),
  };
}
