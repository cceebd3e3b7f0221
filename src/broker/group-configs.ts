/**
 * The GROUP config resource (type 32, KIP-848 dynamic group configs): per-group overrides of
 * session and heartbeat settings, stored as ConfigRecords like topic configs. The keys are the
 * group table of src/config; here their defaults and bounds are read from the broker's current
 * values, as Kafka's GroupConfig does.
 */
import { GROUP_CONFIG_DEFS, GROUP_DEFS } from '../config/group-config-defs.js';
import type { ConfigResolver } from './config-resolver.js';

export { GROUP_CONFIG_DEFS };

export function groupConfigDefault(configs: ConfigResolver, name: string): string | null {
  const def = GROUP_DEFS.get(name);
  if (!def) return null;
  return (def.brokerKey !== undefined ? configs.brokerValue(def.brokerKey) : undefined) ?? def.defaultValue;
}

/** Why a group config value is refused, or null. */
export function checkGroupConfig(configs: ConfigResolver, name: string, value: string | null): string | null {
  const def = GROUP_DEFS.get(name);
  if (!def) return `Unknown group config name: ${name}`;
  if (value === null) return null;
  if (def.type === 'string') return def.oneOf && !def.oneOf.includes(value) ? `Invalid value ${value} for configuration ${name}` : null;
  if (!/^-?\d+$/.test(value)) return `Invalid value ${value} for configuration ${name}: Not a number of type INT`;
  const n = Number(value);
  const min = def.minBrokerKey !== undefined ? Number(configs.brokerValue(def.minBrokerKey)) : 0;
  const max = def.maxBrokerKey !== undefined ? Number(configs.brokerValue(def.maxBrokerKey)) : Number.MAX_SAFE_INTEGER;
  if (n < min) return `${name} must be greater than or equal to ${def.minBrokerKey ?? 0} ${min}`;
  if (n > max) return `${name} must be less than or equal to ${def.maxBrokerKey ?? ''} ${max}`.replace('  ', ' ');
  return null;
}
