/**
 * The GROUP config resource's keys (KIP-848 dynamic group configs, Kafka's `GroupConfig`): per-group
 * overrides of session and heartbeat settings. A consumer key defaults to its broker key and is
 * bounded by the broker's current min/max keys, as Kafka's `GroupConfig.validate` bounds it; the
 * share and streams keys likewise default to their `group.share.*` and `group.streams.*` broker keys.
 */
import { brokerDef } from './broker-config-defs.js';
import { configDef, indexDefs, type ConfigDef, type ConfigType } from './config-def.js';

function bounded(name: string, brokerKey: string, minBrokerKey: string, maxBrokerKey: string): ConfigDef {
  const b = brokerDef(brokerKey);
  return configDef('GROUP', name, b.type, b.defaultValue, { brokerKey, minBrokerKey, maxBrokerKey });
}

const own = (name: string, type: ConfigType, defaultValue: string, oneOf?: readonly string[]): ConfigDef =>
  configDef('GROUP', name, type, defaultValue, oneOf !== undefined ? { oneOf } : {});

/** streams.num.standby.replicas: defaults to the broker's, bounded by 0 and group.streams.max.standby.replicas. */
function streamsStandby(): ConfigDef {
  const b = brokerDef('group.streams.num.standby.replicas');
  return configDef('GROUP', 'streams.num.standby.replicas', b.type, b.defaultValue, { brokerKey: 'group.streams.num.standby.replicas', maxBrokerKey: 'group.streams.max.standby.replicas' });
}

export const GROUP_CONFIG_DEFS: readonly ConfigDef[] = [
  bounded('consumer.session.timeout.ms', 'group.consumer.session.timeout.ms', 'group.consumer.min.session.timeout.ms', 'group.consumer.max.session.timeout.ms'),
  bounded('consumer.heartbeat.interval.ms', 'group.consumer.heartbeat.interval.ms', 'group.consumer.min.heartbeat.interval.ms', 'group.consumer.max.heartbeat.interval.ms'),
  bounded('share.session.timeout.ms', 'group.share.session.timeout.ms', 'group.share.min.session.timeout.ms', 'group.share.max.session.timeout.ms'),
  bounded('share.heartbeat.interval.ms', 'group.share.heartbeat.interval.ms', 'group.share.min.heartbeat.interval.ms', 'group.share.max.heartbeat.interval.ms'),
  bounded('share.record.lock.duration.ms', 'group.share.record.lock.duration.ms', 'group.share.min.record.lock.duration.ms', 'group.share.max.record.lock.duration.ms'),
  bounded('share.delivery.count.limit', 'group.share.delivery.count.limit', 'group.share.min.delivery.count.limit', 'group.share.max.delivery.count.limit'),
  bounded('share.partition.max.record.locks', 'group.share.partition.max.record.locks', 'group.share.min.partition.max.record.locks', 'group.share.max.partition.max.record.locks'),
  own('share.auto.offset.reset', 'string', 'latest', ['latest', 'earliest', 'by_duration']),
  own('share.isolation.level', 'string', 'read_uncommitted', ['read_uncommitted', 'read_committed']),
  bounded('streams.session.timeout.ms', 'group.streams.session.timeout.ms', 'group.streams.min.session.timeout.ms', 'group.streams.max.session.timeout.ms'),
  bounded('streams.heartbeat.interval.ms', 'group.streams.heartbeat.interval.ms', 'group.streams.min.heartbeat.interval.ms', 'group.streams.max.heartbeat.interval.ms'),
  streamsStandby(),
];

export const GROUP_DEFS: ReadonlyMap<string, ConfigDef> = indexDefs(GROUP_CONFIG_DEFS);
