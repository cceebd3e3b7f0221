/**
 * One mirror's live parts (KIP-1279 spec §2: the MirrorMetadataManager's per-mirror source Admin
 * and fetcher): the source client built from the CLUSTER_MIRROR configs and the mirror fetcher
 * that appends into this node's partition logs. The fetcher's events are handed back, by mirror
 * partition key, to whoever drives the state machine.
 */
import { MirrorFetcher, type MirrorTopicPartition } from '../fetcher/mirror-fetcher.js';
import type { PartitionFetchStatus } from '../fetcher/partition-state.js';
import { DEFAULT_FETCHER_CONFIG } from '../fetcher/fetcher-config.js';
import { clientOptionsFromConfig } from '../client/client-options.js';
import { KafkaClient } from '../client/kafka-client.js';
import { KafkaSourceEndpoint } from '../fetcher/kafka-source-endpoint.js';
import { ReplicationThrottle } from '../quota/replication-throttle.js';
import { mirrorConfigValue, type MirrorBrokerConfig } from './mirror-config.js';
import type { MirrorHost } from './mirror-host.js';
import { kafkaSourceLookups, type SourceLookups } from './source-lookups.js';
import type { MirrorPartitionKey } from './state-machine.js';

/** What the state actions and the manager ask of a mirror's fetcher (MirrorFetcher is the one). */
interface MirrorPartitionFetcher {
  has(tp: MirrorTopicPartition): boolean;
  addPartitions(tps: readonly MirrorTopicPartition[]): void;
  /** Resolves once no append of these partitions is in progress. */
  removePartitions(tps: readonly MirrorTopicPartition[]): Promise<void>;
  status(tp: MirrorTopicPartition): PartitionFetchStatus | undefined;
  close(): Promise<void>;
}

export interface MirrorRuntime {
  readonly name: string;
  /** connectionFingerprint of the configs it was built from: a change rebuilds it. */
  readonly fingerprint: string;
  readonly client: KafkaClient;
  readonly fetcher: MirrorPartitionFetcher;
  /** LOG_TRUNCATION's questions to the source (loop check, last mirrored epoch). */
  readonly lookups: SourceLookups;
  readonly sourceClusterId: string | null;
}

/** Builds a mirror's runtime; the manager's default is `createMirrorRuntime`. */
export type MirrorRuntimeFactory = (
  host: MirrorHost,
  config: MirrorBrokerConfig,
  name: string,
  cfg: ReadonlyMap<string, string>,
  fingerprint: string,
  events: MirrorRuntimeEvents,
) => MirrorRuntime;

/** What the fetcher reports, by mirror partition key. */
export interface MirrorRuntimeEvents {
  keyFor(mirrorName: string, topicId: string, topicName: string, partition: number): MirrorPartitionKey;
  onEpochFenced(key: MirrorPartitionKey, sourceEpoch: number): void;
  requestEpochBump(key: MirrorPartitionKey, minLeaderEpoch: number): void;
  onPartitionFailed(key: MirrorPartitionKey, err: Error, nonRetryable: boolean): void;
  onProgress(key: MirrorPartitionKey): void;
}

export function topicPartitionOf(key: MirrorPartitionKey): MirrorTopicPartition {
  return { topic: key.topicName, topicId: key.topicId, partition: key.partition };
}

/** One throttle per node: `mirror.replication.throttled.rate` caps all of its mirrors together. */
const throttles = new WeakMap<MirrorHost, ReplicationThrottle>();

function throttleOf(host: MirrorHost): ReplicationThrottle {
  let t = throttles.get(host);
  if (t === undefined) {
    t = new ReplicationThrottle(() => Number(host.config('mirror.replication.throttled.rate') ?? Infinity), host.clock);
    throttles.set(host, t);
  }
  return t;
}

export function createMirrorRuntime(
  host: MirrorHost,
  config: MirrorBrokerConfig,
  name: string,
  cfg: ReadonlyMap<string, string>,
  fingerprint: string,
  events: MirrorRuntimeEvents,
): MirrorRuntime {
  const client = new KafkaClient(clientOptionsFromConfig(cfg, `fjord-mirror-${name}`));
  const num = (k: string, d: number): number => {
    const v = Number(mirrorConfigValue(cfg, k));
    return Number.isFinite(v) ? v : d;
  };
  const keyOf = (tp: MirrorTopicPartition): MirrorPartitionKey => events.keyFor(name, tp.topicId, tp.topic, tp.partition);
  const fetcher = new MirrorFetcher(
    new KafkaSourceEndpoint(client),
    {
      log: (tp) => host.partitionLog(tp.topic, tp.partition),
      destinationLeaderEpoch: (tp) => host.leaderEpoch(tp.topic, tp.partition) ?? 0,
      onEpochFenced: (tp, epoch) => events.onEpochFenced(keyOf(tp), epoch),
      requestEpochBump: (tp, min) => events.requestEpochBump(keyOf(tp), min),
      onPartitionFailed: (tp, err, nonRetryable) => events.onPartitionFailed(keyOf(tp), err, nonRetryable),
      onProgress: (tp) => events.onProgress(keyOf(tp)),
    },
    {
      maxWaitMs: num('mirror.fetch.wait.max.ms', config.fetchWaitMaxMs),
      minBytes: num('mirror.fetch.min.bytes', config.fetchMinBytes),
      maxBytes: num('mirror.fetch.response.max.bytes', config.fetchResponseMaxBytes),
      partitionMaxBytes: num('mirror.fetch.max.bytes', config.fetchMaxBytes),
      backoffMs: num('mirror.fetch.backoff.ms', config.fetchBackoffMs),
      unreachableFailMs: num('mirror.socket.timeout.ms', config.socketTimeoutMs),
      quota: throttleOf(host),
      numFetchers: config.numReplicaFetchers,
      pipelineMaxBytes: num('mirror.fetch.pipeline.max.bytes', DEFAULT_FETCHER_CONFIG.pipelineMaxBytes),
    },
    host.clock,
    host.timers,
  );
  return { name, fingerprint, client, fetcher, lookups: kafkaSourceLookups(client), sourceClusterId: cfg.get('mirror.source.cluster.id') ?? null };
}

export async function closeMirrorRuntime(rt: MirrorRuntime): Promise<void> {
  await rt.fetcher.close();
  rt.client.close();
}
