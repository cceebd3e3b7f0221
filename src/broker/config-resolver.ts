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
  int: ConfigTypeId.INT,
  long: ConfigTypeId.LONG,
  boolean: ConfigTypeId.BOOLEAN,
  string: ConfigTypeId.STRING,
  list: ConfigTypeId.LIST,
  double: ConfigTypeId.DOUBLE,
  password: ConfigTypeId.PASSWORD,
};
export const typeId = (t: ConfigType): number => TYPE_IDS[t];

export class ConfigResolver {
  constructor(
    private readonly config: BrokerConfig,
    private readonly image: MetadataImage,
  ) {}

  private brokerLevels(key: string): { name: string; value: string | null; source: number }[] {
    const out: { name: string; value: string | null; source: number }[] = [];
    const node = this.image.brokerConfigs.get(String(this.config.nodeId))?.get(key);
    if (node !== undefined) out.push({ name: key, value: node, source: ConfigSource.DYNAMIC_BROKER_CONFIG });
    const dflt = this.image.brokerConfigs.get('')?.get(key);
    if (dflt !== undefined) out.push({ name: key, value: dflt, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
    if (this.config.isExplicit(key)) out.push({ name: key, value: this.config.get(key) ?? null, source: ConfigSource.STATIC_BROKER_CONFIG });
    // Kafka's KafkaConfig sets broker.id to node.id when only node.id is given (KRaft): the node's
    // id is broker.id's static value, above its -1 default.
    else if (key === 'broker.id') out.push({ name: key, value: String(this.config.nodeId), source: ConfigSource.STATIC_BROKER_CONFIG });
    const def = BROKER_DEFS.get(key);
    if (def && def.defaultValue !== null) out.push({ name: key, value: def.defaultValue, source: ConfigSource.DEFAULT_CONFIG });
    return out;
  }

  /** The broker's effective value of a key (dynamic overrides included). */
  brokerValue(key: string): string | undefined {
    return this.brokerLevels(key)[0]?.value ?? undefined;
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
      const levels: { name: string; value: string | null; source: number }[] = [];
      const own = t?.configs.get(def.name);
      if (own !== undefined) levels.push({ name: def.name, value: own, source: ConfigSource.DYNAMIC_TOPIC_CONFIG });
      if (def.brokerKey !== undefined) {
        let brokerLevels = this.brokerLevels(def.brokerKey);
        if (def.name === 'retention.ms' && brokerLevels.every((l) => l.source === ConfigSource.DEFAULT_CONFIG)) {
          brokerLevels = [{ name: 'log.retention.ms', value: String(this.config.retentionMs), source: this.config.isExplicit('log.retention.hours') || this.config.isExplicit('log.retention.minutes') ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG }];
        } else if (def.name === 'segment.ms' && brokerLevels.length === 0) {
          brokerLevels = [{ name: 'log.roll.ms', value: String(this.config.segmentMs), source: this.config.isExplicit('log.roll.hours') ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG }];
        } else if (def.name === 'flush.ms' && brokerLevels.length === 0) {
          brokerLevels = [{ name: 'log.flush.interval.ms', value: def.defaultValue, source: ConfigSource.DEFAULT_CONFIG }];
        }
        levels.push(...brokerLevels);
      } else {
        levels.push({ name: def.name, value: def.defaultValue, source: ConfigSource.DEFAULT_CONFIG });
      }
      const top = levels[0];
      out.push({
        name: def.name,
        value: top?.value ?? def.defaultValue,
        source: top?.source ?? ConfigSource.DEFAULT_CONFIG,
        readOnly: false,
        isSensitive: def.sensitive,
        type: typeId(def.type),
        synonyms: levels,
      });
    }
    return out;
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
    return (def.brokerKey !== undefined ? this.brokerValue(def.brokerKey) : undefined) ?? def.defaultValue ?? undefined;
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
