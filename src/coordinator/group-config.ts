import { brokerDef, brokerDefaultNumber } from '../config/broker-config-defs.js';
import { ConfigError } from '../config/config-error.js';
import type { CoordinatorHost } from './coordinator-host.js';

/**
 * Group coordinator settings, read from the broker config with Kafka's keys
 * (`GroupCoordinatorConfig`); an unset key takes the broker table's default.
 */
export interface GroupConfig {
  readonly offsetsTopicPartitions: number;
  readonly minSessionTimeoutMs: number;
  readonly maxSessionTimeoutMs: number;
  readonly initialRebalanceDelayMs: number;
  readonly maxGroupSize: number;
  readonly offsetsRetentionMs: number;
  readonly offsetsRetentionCheckIntervalMs: number;
  readonly offsetMetadataMaxBytes: number;
  readonly consumerSessionTimeoutMs: number;
  readonly consumerHeartbeatIntervalMs: number;
  readonly consumerMinSessionTimeoutMs: number;
  readonly consumerMaxSessionTimeoutMs: number;
  /** Server assignors offered to KIP-848 members; the first is the default. */
  readonly consumerAssignors: readonly string[];
}

function int(host: CoordinatorHost, key: string): number {
  const raw = host.config(key);
  if (raw === undefined || raw.trim() === '') return brokerDefaultNumber(key);
  const v = Number(raw);
  if (!Number.isFinite(v)) throw new ConfigError(`invalid ${key}: ${raw}`);
  return v;
}

export function groupConfigFrom(host: CoordinatorHost): GroupConfig {
  const assignors = (host.config('group.consumer.assignors') ?? brokerDef('group.consumer.assignors').defaultValue ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .map((s) => (s.endsWith('uniformassignor') ? 'uniform' : s.endsWith('rangeassignor') ? 'range' : s))
    .filter((s) => s === 'uniform' || s === 'range');
  return {
    offsetsTopicPartitions: int(host, 'offsets.topic.num.partitions'),
    minSessionTimeoutMs: int(host, 'group.min.session.timeout.ms'),
    maxSessionTimeoutMs: int(host, 'group.max.session.timeout.ms'),
    initialRebalanceDelayMs: int(host, 'group.initial.rebalance.delay.ms'),
    maxGroupSize: int(host, 'group.max.size'),
    offsetsRetentionMs: int(host, 'offsets.retention.minutes') * 60000,
    offsetsRetentionCheckIntervalMs: int(host, 'offsets.retention.check.interval.ms'),
    offsetMetadataMaxBytes: int(host, 'offset.metadata.max.bytes'),
    consumerSessionTimeoutMs: int(host, 'group.consumer.session.timeout.ms'),
    consumerHeartbeatIntervalMs: int(host, 'group.consumer.heartbeat.interval.ms'),
    consumerMinSessionTimeoutMs: int(host, 'group.consumer.min.session.timeout.ms'),
    consumerMaxSessionTimeoutMs: int(host, 'group.consumer.max.session.timeout.ms'),
    consumerAssignors: assignors.length > 0 ? assignors : ['uniform', 'range'],
  };
}
