/**
 * An admin client for cluster mirroring (KIP-1279 spec §12), the typed counterpart of Kafka's
 * Admin mirror methods: create/start/stop/pause/resume/delete/list/describe, the CLUSTER_MIRROR
 * config resource (DescribeConfigs / IncrementalAlterConfigs, resource type 64) and the direct
 * failback lookup of last mirrored epochs. Every call goes over the wire with the generated
 * codecs; connections come from the project's Kafka client (src/client/).
 *
 * DescribeClusterMirrors is sent to every broker and merged (each broker reports the partitions
 * it leads), as the reference admin does.
 */
import { Apis, type ApiSpec } from '../client/apis.js';
import type { KafkaClientOptions } from '../client/client-options.js';
import { KafkaClient } from '../client/kafka-client.js';
import { ApiKey } from '../protocol/generated/api-table.js';
import { ERRORS, ErrorCode } from '../protocol/generated/errors.js';
import { encodeDescribeLogDirsRequest, type DescribeLogDirsRequestInput } from '../protocol/generated/messages/describe-log-dirs-request.js';
import { decodeDescribeLogDirsResponse, type DescribeLogDirsResponse } from '../protocol/generated/messages/describe-log-dirs-response.js';
import { encodeDescribeProducersRequest, type DescribeProducersRequestInput } from '../protocol/generated/messages/describe-producers-request.js';
import { decodeDescribeProducersResponse, type DescribeProducersResponse } from '../protocol/generated/messages/describe-producers-response.js';
import { ConfigResourceType } from '../protocol/config-resource-type.js';
import { KafkaError } from '../protocol/kafka-error.js';

/** DescribeProducers v0 (KIP-664), for the transactions a stop would abort. */
const DESCRIBE_PRODUCERS: ApiSpec<DescribeProducersRequestInput, DescribeProducersResponse> = {
  apiKey: ApiKey.DescribeProducers,
  versions: [0, 0],
  encode: encodeDescribeProducersRequest,
  decode: decodeDescribeProducersResponse,
};

/** A producer whose transaction is open in a partition. */
export interface OpenTransaction {
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly firstOffset: number;
}

/** DescribeLogDirs v2-4 (flexible; Kafka 4 no longer takes v0), for partition sizes. */
const DESCRIBE_LOG_DIRS: ApiSpec<DescribeLogDirsRequestInput, DescribeLogDirsResponse> = {
  apiKey: ApiKey.DescribeLogDirs,
  versions: [2, 4],
  encode: encodeDescribeLogDirsRequest,
  decode: decodeDescribeLogDirsResponse,
};
const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * A failed admin call: the Kafka error code, its name and the broker's message. A subclass of
 * KafkaError because it also carries the per-topic outcomes of the request, which the CLI prints
 * (it tells this error apart by type to find them).
 */
export class MirrorAdminError extends KafkaError {
  constructor(
    code: number,
    message: string | null,
    readonly topics: readonly TopicOutcome[] = [],
  ) {
    super(code, `${ERRORS.get(code)?.name ?? `error ${code}`}${message ? `: ${message}` : ''}`);
  }
}

interface TopicOutcome {
  readonly name: string;
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

interface ClusterMirrorListing {
  readonly mirrorName: string;
  readonly sourceBootstrap: string;
  readonly sourceClusterId: string;
  readonly topicCount: number;
  readonly topicNames: readonly string[];
  /**
   * Metadata offset the listing was read from (-1 when the cluster does not say). Passed back as
   * `stateValidationOffset`, a change of a topic made after this read is refused with
   * INVALID_CLUSTER_MIRROR_STATES (145): two operators cannot act on a state only one has seen.
   */
  readonly stateOffset: number;
}

/** Optimistic locking of Start/Stop/Pause/Resume/Delete (KIP-1279 §4.2); -1 skips the check. */
interface StateValidation {
  readonly stateValidationOffset?: number;
}

const validationOffset = (o: StateValidation): bigint => BigInt(o.stateValidationOffset ?? -1);

export interface PartitionMirrorDescription {
  readonly topic: string;
  readonly partition: number;
  readonly sourceOffset: number;
  readonly destinationOffset: number;
  readonly lag: number;
  readonly state: string;
  readonly retryAttempt: number;
  readonly errorMessage: string | null;
  /** Max timestamp of the newest batch mirrored, and of the newest on the source; -1 unknown. */
  readonly mirroredMaxTimestamp: number;
  readonly sourceMaxTimestamp: number;
  /**
   * How far the mirror trails in the records' time: source newest minus mirrored newest (ms);
   * 0 when caught up, -1 when unknown (not MIRRORING, or a cluster that does not say).
   */
  readonly timeLagMs: number;
  /** Last good fetch from the source (ms since the epoch), -1 never or not MIRRORING. */
  readonly lastFetchTimestamp: number;
  /** The last error talking to the source since the last good fetch. */
  readonly linkError: string | null;
  /** The topic's desired state (MIRRORING, PAUSED, STOPPED); null when no node said (an older node). */
  readonly desiredState: string | null;
}

function timeLagOf(lag: number, source: number, mirrored: number): number {
  if (lag === 0) return 0;
  if (lag < 0 || source < 0 || mirrored < 0) return -1;
  return Math.max(0, source - mirrored);
}

interface ClusterMirrorDescription {
  readonly mirrorName: string;
  readonly errorCode: number;
  readonly partitions: readonly PartitionMirrorDescription[];
  /** Every topic bound to the mirror, with its desired state (null when no node said). */
  readonly desiredStates: ReadonlyMap<string, string | null>;
}

interface MirrorConfigValue {
  readonly name: string;
  readonly value: string | null;
  readonly isDefault: boolean;
  readonly isSensitive: boolean;
}

/** IncrementalAlterConfigs operations. */
export const ConfigOp = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;

export class MirrorAdmin {
  private readonly client: KafkaClient;

  constructor(opts: KafkaClientOptions) {
    this.client = new KafkaClient({ clientId: 'fjord-cluster-mirrors', ...opts });
  }

  close(): void {
    this.client.close();
  }

  private async rpc<Req, Res>(api: ApiSpec<Req, Res>, req: Req, brokerId: number | null = null): Promise<Res> {
    const res = await this.client.sendIfSupported(api, req, brokerId);
    if (res === null) throw new MirrorAdminError(ErrorCode.UNSUPPORTED_VERSION, `the broker does not support API ${api.apiKey} v${api.versions[0]}-${api.versions[1]}`);
    return res;
  }

  private static check(res: { errorCode: number; errorMessage: string | null; topics?: readonly TopicOutcome[] }): TopicOutcome[] {
    const topics = [...(res.topics ?? [])];
    if (res.errorCode !== ErrorCode.NONE) throw new MirrorAdminError(res.errorCode, res.errorMessage, topics);
    return topics;
  }

  /** CreateClusterMirror; the broker resolves `mirror.source.cluster.id` when it is absent. */
  async createClusterMirror(name: string, configs: Readonly<Record<string, string>>): Promise<void> {
    const res = await this.rpc(Apis.CreateClusterMirror, { mirrorName: name, config: Object.entries(configs).map(([n, value]) => ({ name: n, value })) });
    MirrorAdmin.check(res);
  }

  /** StartMirrorTopics; topic ids and partition counts are looked up on the source by the broker. */
  async startMirrorTopics(name: string, topics: readonly string[], opts: { includePatterns?: readonly string[]; excludePatterns?: readonly string[] } & StateValidation = {}): Promise<TopicOutcome[]> {
    const res = await this.rpc(Apis.StartMirrorTopics, {
            mirrorName: name,
            topics: topics.map((topicName) => ({ topicName, topicId: ZERO_UUID, numPartitions: 0 })),
            includePatterns: opts.includePatterns ?? [],
            excludePatterns: opts.excludePatterns ?? [],
            stateValidationOffset: validationOffset(opts),
          });
    return MirrorAdmin.check(res);
  }

  async stopMirrorTopics(name: string, topics: readonly string[], opts: { patterns?: readonly string[] } & StateValidation = {}): Promise<TopicOutcome[]> {
    const res = await this.rpc(Apis.StopMirrorTopics, { mirrorName: name, topics: topics.map((topicName) => ({ topicName })), patterns: opts.patterns ?? [], stateValidationOffset: validationOffset(opts) });
    return MirrorAdmin.check(res);
  }

  async pauseMirrorTopics(name: string, topics: readonly string[], opts: StateValidation = {}): Promise<TopicOutcome[]> {
    const res = await this.rpc(Apis.PauseMirrorTopics, { mirrorName: name, topics: topics.map((topicName) => ({ topicName })), stateValidationOffset: validationOffset(opts) });
    return MirrorAdmin.check(res);
  }

  async resumeMirrorTopics(name: string, topics: readonly string[], opts: StateValidation = {}): Promise<TopicOutcome[]> {
    const res = await this.rpc(Apis.ResumeMirrorTopics, { mirrorName: name, topics: topics.map((topicName) => ({ topicName })), stateValidationOffset: validationOffset(opts) });
    return MirrorAdmin.check(res);
  }

  async deleteClusterMirror(name: string, opts: StateValidation = {}): Promise<void> {
    const res = await this.rpc(Apis.DeleteClusterMirror, { mirrorName: name, stateValidationOffset: validationOffset(opts) });
    MirrorAdmin.check(res);
  }

  async listClusterMirrors(includeTopicNames = true): Promise<ClusterMirrorListing[]> {
    const res = await this.rpc(Apis.ListClusterMirrors, { includeTopicNames });
    MirrorAdmin.check(res);
    const stateOffset = Number(res.stateOffset);
    return res.mirrors.map((m) => ({ mirrorName: m.mirrorName, sourceBootstrap: m.sourceBootstrap, sourceClusterId: m.sourceClusterId, topicCount: m.topicCount, topicNames: m.topicNames, stateOffset }));
  }

  /** DescribeClusterMirrors to every broker, merged per mirror (empty names = all mirrors). */
  async describeClusterMirrors(names: readonly string[] = []): Promise<ClusterMirrorDescription[]> {
    const md = await this.client.metadata([]);
    const brokers = md.brokers.length > 0 ? md.brokers.map((b) => b.nodeId) : [null];
    const merged = new Map<string, { errorCode: number; partitions: Omit<PartitionMirrorDescription, 'desiredState'>[]; desired: Map<string, string | null> }>();
    for (const b of brokers) {
      const res = await this.rpc(Apis.DescribeClusterMirrors, { mirrorNames: [...names], includeAuthorizedOperations: false, clusterId: null, lastMirrorEpochLookups: [] }, b);
      MirrorAdmin.check({ errorCode: res.errorCode, errorMessage: res.errorMessage });
      for (const m of res.mirrors) {
        let entry = merged.get(m.mirrorName);
        if (entry === undefined) merged.set(m.mirrorName, (entry = { errorCode: m.errorCode, partitions: [], desired: new Map() }));
        if (m.errorCode !== ErrorCode.NONE) entry.errorCode = m.errorCode;
        for (const t of m.topics) {
          if ((entry.desired.get(t.topicName) ?? null) === null) entry.desired.set(t.topicName, t.desiredState);
          for (const p of t.partitions) {
            entry.partitions.push({
              topic: t.topicName,
              partition: p.partitionIndex,
              sourceOffset: Number(p.sourceOffset),
              destinationOffset: Number(p.destinationOffset),
              lag: Number(p.lag),
              state: p.stateValue,
              retryAttempt: p.retryAttempt,
              errorMessage: p.errorMessage,
              mirroredMaxTimestamp: Number(p.mirroredMaxTimestamp),
              sourceMaxTimestamp: Number(p.sourceMaxTimestamp),
              timeLagMs: timeLagOf(Number(p.lag), Number(p.sourceMaxTimestamp), Number(p.mirroredMaxTimestamp)),
              lastFetchTimestamp: Number(p.lastFetchTimestamp),
              linkError: p.linkError,
            });
          }
        }
      }
    }
    return [...merged].map(([mirrorName, e]) => ({
      mirrorName,
      errorCode: e.errorCode,
      partitions: e.partitions.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition)).map((p) => ({ ...p, desiredState: e.desired.get(p.topic) ?? null })),
      desiredStates: e.desired,
    }));
  }

  /** The LMEs this cluster holds as a mirror of `clusterId` (the failback lookup), max per partition. */
  async lookupLastMirrorEpochs(clusterId: string, lookups: readonly { topicId: string; partitions: readonly number[] }[]): Promise<Map<string, number>> {
    const md = await this.client.metadata([]);
    const out = new Map<string, number>();
    for (const b of md.brokers.map((x) => x.nodeId)) {
      const res = await this.rpc(Apis.DescribeClusterMirrors, { mirrorNames: [], includeAuthorizedOperations: false, clusterId, lastMirrorEpochLookups: lookups.map((l) => ({ topicId: l.topicId, partitions: [...l.partitions] })) }, b);
      for (const t of res.lookupResults) {
        for (const p of t.partitions) {
          const k = `${t.topicId}:${p.partitionIndex}`;
          out.set(k, Math.max(out.get(k) ?? -1, p.lastMirrorEpoch));
        }
      }
    }
    return out;
  }

  /** DescribeConfigs on the CLUSTER_MIRROR resource. */
  async describeMirrorConfig(name: string): Promise<MirrorConfigValue[]> {
    const res = await this.rpc(Apis.DescribeConfigs, { resources: [{ resourceType: ConfigResourceType.CLUSTER_MIRROR, resourceName: name, configurationKeys: null }], includeSynonyms: false, includeDocumentation: false });
    const r = res.results[0];
    if (r === undefined) throw new MirrorAdminError(ErrorCode.UNKNOWN_SERVER_ERROR, 'empty DescribeConfigs response');
    if (r.errorCode !== ErrorCode.NONE) throw new MirrorAdminError(r.errorCode, r.errorMessage);
    // configSource 5 = DEFAULT_CONFIG
    return r.configs.map((c) => ({ name: c.name, value: c.value, isDefault: c.configSource === 5, isSensitive: c.isSensitive }));
  }

  /** IncrementalAlterConfigs on the CLUSTER_MIRROR resource. */
  async alterMirrorConfig(name: string, ops: readonly { name: string; op: number; value: string | null }[], validateOnly = false): Promise<void> {
    const res = await this.rpc(Apis.IncrementalAlterConfigs, { resources: [{ resourceType: ConfigResourceType.CLUSTER_MIRROR, resourceName: name, configs: ops.map((o) => ({ name: o.name, configOperation: o.op, value: o.value })) }], validateOnly });
    const r = res.responses[0];
    if (r === undefined) throw new MirrorAdminError(ErrorCode.UNKNOWN_SERVER_ERROR, 'empty IncrementalAlterConfigs response');
    if (r.errorCode !== ErrorCode.NONE) throw new MirrorAdminError(r.errorCode, r.errorMessage);
  }

  /**
   * Size in bytes of each partition of `topics` (`topic-partition` → bytes), from DescribeLogDirs
   * on every broker; with several replicas the largest (the leader's, or one ahead of it).
   */
  async partitionSizes(topics: readonly string[]): Promise<Map<string, number>> {
    const md = await this.client.metadata([...topics]);
    const ask = md.topics.filter((t) => t.errorCode === ErrorCode.NONE && t.name !== null).map((t) => ({ topic: t.name as string, partitions: t.partitions.map((p) => p.partitionIndex) }));
    const out = new Map<string, number>();
    if (ask.length === 0) return out;
    for (const b of md.brokers.map((x) => x.nodeId)) {
      const res = await this.rpc(DESCRIBE_LOG_DIRS, { topics: ask }, b);
      for (const dir of res.results) {
        if (dir.errorCode !== ErrorCode.NONE) continue;
        for (const t of dir.topics) {
          for (const p of t.partitions) {
            const k = `${t.name}-${p.partitionIndex}`;
            out.set(k, Math.max(out.get(k) ?? 0, Number(p.partitionSize)));
          }
        }
      }
    }
    return out;
  }

  /** Open transactions per `topic-partition`, from DescribeProducers to each partition's leader. */
  async openTransactions(topics: readonly string[]): Promise<Map<string, OpenTransaction[]>> {
    const md = await this.client.metadata([...topics]);
    const byLeader = new Map<number, { name: string; partitionIndexes: number[] }[]>();
    for (const t of md.topics) {
      if (t.errorCode !== ErrorCode.NONE || t.name === null) continue;
      for (const p of t.partitions) {
        let list = byLeader.get(p.leaderId);
        if (list === undefined) byLeader.set(p.leaderId, (list = []));
        let entry = list.find((e) => e.name === t.name);
        if (entry === undefined) list.push((entry = { name: t.name, partitionIndexes: [] }));
        entry.partitionIndexes.push(p.partitionIndex);
      }
    }
    const out = new Map<string, OpenTransaction[]>();
    for (const [leader, ask] of byLeader) {
      const res = await this.rpc(DESCRIBE_PRODUCERS, { topics: ask }, leader);
      for (const t of res.topics) {
        for (const p of t.partitions) {
          if (p.errorCode !== ErrorCode.NONE) throw new MirrorAdminError(p.errorCode, `DescribeProducers ${t.name}-${p.partitionIndex}: ${p.errorMessage ?? ''}`);
          const open = p.activeProducers.filter((s) => s.currentTxnStartOffset >= 0n).map((s) => ({ producerId: s.producerId, producerEpoch: s.producerEpoch, firstOffset: Number(s.currentTxnStartOffset) }));
          out.set(`${t.name}-${p.partitionIndex}`, open);
        }
      }
    }
    return out;
  }

  /** Topic names of the cluster (for resolving --topics patterns). */
  async listTopics(): Promise<string[]> {
    const md = await this.client.metadata(null);
    return md.topics.filter((t) => t.errorCode === ErrorCode.NONE && t.name !== null && !t.isInternal).map((t) => t.name as string);
  }
}
