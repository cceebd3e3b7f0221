/**
 * The one shape of a configuration key, for every resource that has configs: the broker, topics,
 * groups (KIP-848) and cluster mirrors (KIP-1279). It follows Kafka's `ConfigDef.ConfigKey`: a
 * name, a type, a default, a validator, and whether the value is sensitive; and, as Kafka's
 * `ServerTopicConfigSynonyms` / `GroupConfig` / `ClusterMirrorConfig` do, the broker key a
 * resource-level key falls back to. New keys are added by appending entries to a scope's table.
 */

/** Kafka's `ConfigDef.Type` names, in lower case. */
export type ConfigType = 'short' | 'int' | 'long' | 'boolean' | 'string' | 'list' | 'double' | 'password';

/** The config resource types a key applies to (Kafka's `ConfigResource.Type`). */
export const ConfigScope = {
  BROKER: 'BROKER',
  TOPIC: 'TOPIC',
  GROUP: 'GROUP',
  CLUSTER_MIRROR: 'CLUSTER_MIRROR',
} as const;
export type ConfigScope = (typeof ConfigScope)[keyof typeof ConfigScope];

/** Returns why a value is refused (a whole message), or null when it is accepted. */
type ConfigValidator = (value: string) => string | null;

export interface ConfigDef {
  readonly name: string;
  readonly scope: ConfigScope;
  readonly type: ConfigType;
  /** Kafka's default, as a string; null when Kafka has none. */
  readonly defaultValue: string | null;
  /** Lower bound of a numeric key (Kafka's `Range.atLeast`). */
  readonly min?: number;
  /** Upper bound of a numeric key (with `min`, Kafka's `Range.between`). */
  readonly max?: number;
  /** The values a string key may take (Kafka's `ValidString.in`). */
  readonly oneOf?: readonly string[];
  /** A check beyond type, bound and choice; its message replaces the generic one. */
  readonly validate?: ConfigValidator;
  /** For a topic, group or mirror key: the broker key whose value is its default. */
  readonly brokerKey?: string;
  /** Group keys bounded by the broker's current value of these keys (Kafka's GroupConfig checks). */
  readonly minBrokerKey?: string;
  readonly maxBrokerKey?: string;
  /** Not alterable at runtime (Kafka's read-only broker configs); the rest are dynamic. */
  readonly readOnly: boolean;
  /** A PASSWORD value: DescribeConfigs reports it as null, as Kafka hides sensitive values. */
  readonly sensitive: boolean;
  /** A mirror key that must always have a value (cannot be deleted). */
  readonly required?: boolean;
}

/** What an entry may say besides its name, type and default. */
export type ConfigOptions = Partial<Omit<ConfigDef, 'name' | 'scope' | 'type' | 'defaultValue' | 'readOnly' | 'sensitive'>> & {
  readonly readOnly?: boolean;
};

export function configDef(scope: ConfigScope, name: string, type: ConfigType, defaultValue: string | null, options: ConfigOptions = {}): ConfigDef {
  return { name, scope, type, defaultValue, ...options, readOnly: options.readOnly === true, sensitive: type === 'password' };
}

/** Long.MAX_VALUE, Kafka's "never" for durations and counts. */
export const LONG_MAX = '9223372036854775807';

/** Checks one value against its type, bound and choices; returns an error message or null. */
export function checkValue(type: ConfigType, value: string, extra: { readonly min?: number; readonly max?: number; readonly oneOf?: readonly string[] } = {}): string | null {
  switch (type) {
    case 'short':
    case 'int':
    case 'long': {
      if (!/^-?\d+$/.test(value.trim())) return `expected an integer, got '${value}'`;
      const n = BigInt(value.trim());
      const bits = type === 'short' ? 15n : type === 'int' ? 31n : 63n;
      const [lo, hi] = [-(2n ** bits), 2n ** bits - 1n];
      if (n < lo || n > hi) return `${value} is out of range for ${type}`;
      if (extra.min !== undefined && n < BigInt(extra.min)) return `value must be at least ${extra.min}, got ${value}`;
      if (extra.max !== undefined && n > BigInt(extra.max)) return `value must be no more than ${extra.max}, got ${value}`;
      return null;
    }
    case 'double': {
      const d = Number(value);
      if (!Number.isFinite(d) || value.trim() === '') return `expected a number, got '${value}'`;
      if (extra.min !== undefined && d < extra.min) return `value must be at least ${extra.min}, got ${value}`;
      if (extra.max !== undefined && d > extra.max) return `value must be no more than ${extra.max}, got ${value}`;
      return null;
    }
    case 'boolean':
      return /^(true|false)$/i.test(value.trim()) ? null : `expected true or false, got '${value}'`;
    default:
      if (extra.oneOf && !extra.oneOf.includes(value.trim())) return `expected one of ${extra.oneOf.join(', ')}, got '${value}'`;
      return null;
  }
}

/** Indexes a scope's table by name, refusing a key defined twice (the last would silently win). */
export function indexDefs(defs: readonly ConfigDef[]): ReadonlyMap<string, ConfigDef> {
  const out = new Map<string, ConfigDef>();
  for (const d of defs) {
    if (out.has(d.name)) throw new Error(`config key ${d.name} is defined twice for ${d.scope}`);
    out.set(d.name, d);
  }
  return out;
}

export function splitList(v: string | undefined | null): string[] {
  if (v === undefined || v === null) return [];
  return v.split(',').map((s) => s.trim()).filter((s) => s !== '');
}
