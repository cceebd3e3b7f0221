/**
 * Node configuration with Kafka's own keys and defaults (the broker table of src/config). Values
 * are kept as strings in a map so DescribeConfigs can report them verbatim; typed getters parse
 * them. Unknown keys are accepted with a warning (Kafka does the same: "These configurations ...
 * were supplied but are not used yet"); a value that does not parse or is out of range refuses to
 * start.
 */
import { BROKER_CONFIG_DEFS, BROKER_DEFS, brokerDefOf } from '../config/broker-config-defs.js';
import { checkValue, type ConfigDef } from '../config/config-def.js';
import { ConfigError } from '../config/config-error.js';
import { TOPIC_CONFIG_DEFS, TOPIC_DEFS } from '../config/topic-config-defs.js';

export { BROKER_CONFIG_DEFS, TOPIC_CONFIG_DEFS, TOPIC_DEFS, ConfigError, checkValue };
export type { ConfigDef, ConfigType } from '../config/config-def.js';
export { parseProperties } from '../config/properties.js';

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

interface ConfigWarning {
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
      // Per-listener keys are checked as the key they override.
      const def = brokerDefOf(k);
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
  /** log.dirs, else log.dir: every directory partitions are placed in. */
  get logDirs(): string[] {
    const dirs = (this.get('log.dirs') ?? this.get('log.dir') ?? './data').split(',').map((s) => s.trim()).filter(Boolean);
    return dirs.length > 0 ? dirs : ['./data'];
  }
  /** The first log dir: meta.properties and the metadata log live there. */
  get dataDir(): string {
    return this.logDirs[0]!;
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
    if (def.brokerKey === undefined) return { value: def.defaultValue, brokerKey: null, explicit: false };
    const v = this.get(def.brokerKey) ?? def.defaultValue;
    return { value: v ?? null, brokerKey: def.brokerKey, explicit: this.isExplicit(def.brokerKey) };
  }
}

export function brokerConfigDef(key: string): ConfigDef | undefined {
  return BROKER_DEFS.get(key);
}

/** Validates a topic-level config value; returns an error message or null. */
export function checkTopicConfig(key: string, value: string | null): string | null {
  const def = TOPIC_DEFS.get(key);
  if (!def) return `Unknown topic config name: ${key}`;
  if (value === null) return null;
  if (def.validate) return def.validate(value);
  const err = checkValue(def.type, value, def);
  return err ? `Invalid value ${value} for configuration ${key}: ${err}` : null;
}
