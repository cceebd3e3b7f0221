/**
 * The GROUP config resource (type 32, KIP-848 dynamic group configs): per-group overrides of
 * session and heartbeat settings, stored as ConfigRecords like topic configs. Kafka's GroupConfig
 * keys, each defaulting to a broker key and bounded by the broker's min/max where Kafka bounds it.
 */
import type { ConfigResolver } from './config-resolver.js';

interface GroupConfigDef {
  readonly brokerKey: string | null;
  readonly fallback: string;
  readonly type: 'int' | 'string';
  readonly min?: string;
  readonly max?: string;
  readonly oneOf?: readonly string[];
}

export const GROUP_CONFIG_DEFS: ReadonlyMap<string, GroupConfigDef> = new Map<string, GroupConfigDef>([
  ['consumer.session.timeout.ms', { brokerKey: 'group.consumer.session.timeout.ms', fallback: '45000', type: 'int', min: 'group.consumer.min.session.timeout.ms', max: 'group.consumer.max.session.timeout.ms' }],
  ['consumer.heartbeat.interval.ms', { brokerKey: 'group.consumer.heartbeat.interval.ms', fallback: '5000', type: 'int', min: 'group.consumer.min.heartbeat.interval.ms', max: 'group.consumer.max.heartbeat.interval.ms' }],
  ['share.session.timeout.ms', { brokerKey: null, fallback: '45000', type: 'int' }],
  ['share.heartbeat.interval.ms', { brokerKey: null, fallback: '5000', type: 'int' }],
  ['share.record.lock.duration.ms', { brokerKey: null, fallback: '30000', type: 'int' }],
  ['share.auto.offset.reset', { brokerKey: null, fallback: 'latest', type: 'string', oneOf: ['latest', 'earliest', 'by_duration'] }],
  ['share.isolation.level', { brokerKey: null, fallback: 'read_uncommitted', type: 'string', oneOf: ['read_uncommitted', 'read_committed'] }],
  ['streams.session.timeout.ms', { brokerKey: null, fallback: '45000', type: 'int' }],
  ['streams.heartbeat.interval.ms', { brokerKey: null, fallback: '5000', type: 'int' }],
  ['streams.num.standby.replicas', { brokerKey: null, fallback: '0', type: 'int' }],
]);

export function groupConfigDefault(configs: ConfigResolver, name: string): string | null {
  const def = GROUP_CONFIG_DEFS.get(name);
  if (!def) return null;
  return (def.brokerKey !== null ? configs.brokerValue(def.brokerKey) : undefined) ?? def.fallback;
}

/** Why a group config value is refused, or null. */
export function checkGroupConfig(configs: ConfigResolver, name: string, value: string | null): string | null {
  const def = GROUP_CONFIG_DEFS.get(name);
  if (!def) return `Unknown group config name: ${name}`;
  if (value === null) return null;
  if (def.type === 'string') return def.oneOf && !def.oneOf.includes(value) ? `Invalid value ${value} for configuration ${name}` : null;
  if (!/^-?\d+$/.test(value)) return `Invalid value ${value} for configuration ${name}: Not a number of type INT`;
  const n = Number(value);
  const min = def.min !== undefined ? Number(configs.brokerValue(def.min)) : 0;
  const max = def.max !== undefined ? Number(configs.brokerValue(def.max)) : Number.MAX_SAFE_INTEGER;
  if (n < min) return `${name} must be greater than or equal to ${def.min ?? 0} ${min}`;
  if (n > max) return `${name} must be less than or equal to ${def.max ?? ''} ${max}`.replace('  ', ' ');
  return null;
}
