/**
 * Effective configuration values with their source, the way Kafka's DescribeConfigs reports
 * them: a topic value comes from the topic override, else the broker's dynamic per-node value,
 * else the dynamic cluster-wide default, else the static server.properties value, else Kafka's
 * default (ConfigSource 1 → 2 → 3 → 4 → 5), and the lower levels are listed as synonyms.
 */
import { BROKER_CONFIG_DEFS, BROKER_DEFS, brokerDefOf } from '../config/broker-config-defs.js';
import type { ConfigType } from '../config/config-def.js';
import { TOPIC_CONFIG_DEFS, TOPIC_DEFS } from '../config/topic-config-defs.js';
import type { BrokerConfig } from './config.js';
import type { MetadataImage } from '../controller/metadata-image.js';

export const ConfigSource = {
  UNKNOWN: 0,
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
} as const;

/** ConfigType in DescribeConfigs v3+ (Kafka's ConfigDef.Type ids). */
const ConfigTypeId = { UNKNOWN: 0, BOOLEAN: 1, STRING: 2, INT: 3, SHORT: 4, LONG: 5, DOUBLE: 6, LIST: 7, CLASS: 8, PASSWORD: 9 } as const;

export interface ResolvedConfig {
  readonly name: string;
  readonly value: string | null;
  readonly source: number;
  readonly readOnly: boolean;
  readonly isSensitive: boolean;
  readonly type: number;
  readonly synonyms: { name: string; value: string | null; source: number }[];
}

const TYPE_IDS: Readonly<Record<ConfigType, number>> = {
  short: ConfigTypeId.SHORT,
  int: ConfigTypeId.INT,
  long: ConfigTypeId.LONG,
  boolean: ConfigTypeId.BOOLEAN,
  string: ConfigTypeId.STRING,
  list: ConfigTypeId.LIST,
  double: ConfigTypeId.DOUBLE,
  password: ConfigTypeId.PASSWORD,
};
export const typeId = (t: ConfigType): number => TYPE_IDS[t];

type Level = { name: string; value: string | null; source: number };

/**
 * Broker keys whose value falls back to other keys when unset, most specific first (Kafka's
 * DynamicBrokerConfig.brokerConfigSynonyms): log.retention.ms to minutes to hours, and so on.
 */
const BROKER_SYNONYMS: Readonly<Record<string, readonly string[]>> = {
  'log.roll.ms': ['log.roll.ms', 'log.roll.hours'],
  'log.retention.ms': ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours'],
  'log.flush.interval.ms': ['log.flush.interval.ms', 'log.flush.scheduler.interval.ms'],
};

export class ConfigResolver {
  constructor(
    private readonly config: BrokerConfig,
    private readonly image: MetadataImage,
  ) {}

  /**
   * Every level at which a broker key or one of its synonyms is set, by source first and by
   * synonym within a source (Kafka's ConfigHelper.configSynonyms), in the order they apply. A key
   * with no synonyms yields only its own levels.
   */
  private *synonymLevels(key: string): Generator<Level> {
    const names = BROKER_SYNONYMS[key] ?? [key];
    const node = this.image.brokerConfigs.get(String(this.config.nodeId));
    const cluster = this.image.brokerConfigs.get('');
    for (const n of names) {
      const v = node?.get(n);
      if (v !== undefined) yield { name: n, value: v, source: ConfigSource.DYNAMIC_BROKER_CONFIG };
    }
    for (const n of names) {
      const v = cluster?.get(n);
      if (v !== undefined) yield { name: n, value: v, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG };
    }
    for (const n of names) {
      if (this.config.isExplicit(n)) yield { name: n, value: this.config.get(n) ?? null, source: ConfigSource.STATIC_BROKER_CONFIG };
      // Kafka's KafkaConfig sets broker.id to node.id when only node.id is given (KRaft): the node's
      // id is broker.id's static value, above its -1 default.
      else if (n === 'broker.id') yield { name: n, value: String(this.config.nodeId), source: ConfigSource.STATIC_BROKER_CONFIG };
    }
    for (const n of names) {
      const def = BROKER_DEFS.get(n);
      if (def && def.defaultValue !== null) yield { name: n, value: def.defaultValue, source: ConfigSource.DEFAULT_CONFIG };
    }
  }

  /**
   * The levels DescribeConfigs lists for a broker key: those of its synonyms, from the first
   * level of the key itself on. As in Kafka, a key left unset everywhere lists none, even where a
   * fallback (log.retention.hours under log.retention.ms) supplies its value.
   */
  private brokerLevels(key: string): Level[] {
    const all = [...this.synonymLevels(key)];
    const first = all.findIndex((l) => l.name === key);
    return first < 0 ? [] : all.slice(first);
  }

  /**
   * The broker's value of a key in effect (dynamic overrides included), falling back along its
   * synonyms, in the key's own unit. Only the first level is looked for: the produce path asks.
   */
  brokerValue(key: string): string | undefined {
    const top = this.synonymLevels(key).next().value;
    if (top === undefined || top.value === null) return undefined;
    const scale = top.name === key ? 1 : top.name.endsWith('.hours') ? 3_600_000 : top.name.endsWith('.minutes') ? 60_000 : 1;
    return scale === 1 ? top.value : String(Number(top.value) * scale);
  }

  describeBroker(): ResolvedConfig[] {
    const out: ResolvedConfig[] = [];
    const known = new Set(BROKER_CONFIG_DEFS.map((d) => d.name));
    const extra = new Set<string>();
    for (const scope of [String(this.config.nodeId), '']) for (const k of this.image.brokerConfigs.get(scope)?.keys() ?? []) if (!known.has(k)) extra.add(k);
    for (const def of BROKER_CONFIG_DEFS) {
      const levels = this.brokerLevels(def.name);
      const top = levels[0];
      out.push({
        name: def.name,
        value: top?.value ?? null,
        source: top?.source ?? ConfigSource.DEFAULT_CONFIG,
        readOnly: def.readOnly === true,
        isSensitive: def.sensitive,
        type: typeId(def.type),
        synonyms: levels,
      });
    }
    for (const name of extra) {
      const levels = this.brokerLevels(name);
      const top = levels[0];
      // A per-listener key is as sensitive as the key it overrides (a listener's keystore password).
      const def = brokerDefOf(name);
      const type = def ? typeId(def.type) : ConfigTypeId.UNKNOWN;
      out.push({ name, value: top?.value ?? null, source: top?.source ?? ConfigSource.UNKNOWN, readOnly: false, isSensitive: def?.sensitive ?? false, type, synonyms: levels });
    }
    return out;
  }

  describeTopic(topic: string): ResolvedConfig[] {
    const t = this.image.topic(topic);
    const out: ResolvedConfig[] = [];
    for (const def of TOPIC_CONFIG_DEFS) {
      const levels: Level[] = [];
      const own = t?.configs.get(def.name);
      if (own !== undefined) levels.push({ name: def.name, value: own, source: ConfigSource.DYNAMIC_TOPIC_CONFIG });
      // A key with a broker synonym lists that key's levels; a key without one lists only its override.
      if (def.brokerKey !== undefined) levels.push(...this.brokerLevels(def.brokerKey));
      out.push({
        name: def.name,
        value: own ?? this.topicDefault(def.brokerKey, def.defaultValue) ?? null,
        source: levels[0]?.source ?? ConfigSource.DEFAULT_CONFIG,
        readOnly: false,
        isSensitive: def.sensitive,
        type: typeId(def.type),
        synonyms: levels,
      });
    }
    return out;
  }

  /** A topic key's value where the topic does not set it: its broker key's, else its own default. */
  private topicDefault(brokerKey: string | undefined, defaultValue: string | null): string | undefined {
    return (brokerKey !== undefined ? this.brokerValue(brokerKey) : undefined) ?? defaultValue ?? undefined;
  }

  /**
   * One topic key's effective value for a topic: its override, else its broker key's value, else
   * the key's default. Cheap enough for the produce path (describeTopic resolves every key).
   */
  topicValue(topic: string, key: string): string | undefined {
    const own = this.image.topic(topic)?.configs.get(key);
    if (own !== undefined) return own;
    const def = TOPIC_DEFS.get(key);
    if (def === undefined) return undefined;
    return this.topicDefault(def.brokerKey, def.defaultValue);
  }

  /** The topic's min.insync.replicas. */
  minInsyncReplicas(topic: string): number {
    return Number(this.topicValue(topic, 'min.insync.replicas') ?? '1');
  }

  /** Effective topic properties (Kafka topic keys → values) for building the log's LogConfig. */
  topicProps(topic: string): Record<string, string> {
    const props: Record<string, string> = {};
    for (const c of this.describeTopic(topic)) if (c.value !== null) props[c.name] = c.value;
    return props;
  }
}
