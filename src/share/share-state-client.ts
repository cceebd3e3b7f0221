/**
 * How a share-partition leader keeps its delivery state at the share coordinator (KIP-932;
 * Kafka's DefaultStatePersister and PersisterStateManager): the coordinator of a share-partition
 * is the leader of its `__share_group_state` partition (the key `group:topicId:partition`,
 * hashed as FindCoordinator key type SHARE hashes it). When this node serves that shard the
 * coordinator is called in-process; otherwise ReadShareGroupState, WriteShareGroupState,
 * DeleteShareGroupState and ReadShareGroupStateSummary go to its leader over the node's
 * inter-broker connection. Both paths run the same fenced coordinator code, so a write from a
 * deposed partition leader (an older leader epoch) is FENCED_LEADER_EPOCH either way.
 *
 * NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE and lost connections
 * mean the shard moved or is loading (its node was killed, a new leader is replaying it): the
 * leader is looked up again in the metadata image and the call retried, 100 ms doubling to 1 s,
 * for up to 15 s, as Kafka's PersisterStateManager retries with backoff. After that the error
 * reaches the caller (an acknowledgement then answers COORDINATOR_NOT_AVAILABLE).
 *
 * The coordinator is found in this node's metadata image, which is what FindCoordinator key type
 * SHARE answers from on every node; asking another node over the wire would tell nothing more.
 *
 * Concurrency contract: event loop only; one inter-broker connection per coordinator node.
 */
import { BrokerClients } from '../client/broker-clients.js';
import type { ApiSpec } from '../client/apis.js';
import type { InterBrokerSecurity } from '../client/inter-broker-security.js';
import type { CoordinatorEndpoint, CoordinatorLeadership } from '../coordinator/coordinator-host.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { SHARE_GROUP_STATE, shareStateKey, type ShareCoordinator } from './share-coordinator.js';
import type { PersistedBatch } from './share-partition.js';
import type { SharePersister } from './share-partition-manager.js';
import { ShareStateApis } from './share-state-apis.js';

const RETRY_ELSEWHERE: ReadonlySet<number> = new Set([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NETWORK_EXCEPTION, ErrorCode.REQUEST_TIMED_OUT]);
const RETRY_FOR_MS = 15_000;
/** The coordinator's acks=all append waits up to offsets.commit.timeout.ms (5 s); leave room for it. */
const REQUEST_TIMEOUT_MS = 15_000;

interface ShareStateSummary {
  readonly stateEpoch: number;
  readonly leaderEpoch: number;
  /** -1: the share-partition has no state. */
  readonly startOffset: number;
  readonly deliveryCompleteCount: number;
}

interface ShareStateClientOptions {
  readonly nodeId: number;
  /** Set on a cluster; absent on a node alone, which serves every shard. */
  readonly leadership: CoordinatorLeadership | undefined;
  readonly interBrokerSecurity: InterBrokerSecurity;
  /** The partition's leader epoch in this node's image (-1 when unknown): the epoch a write is fenced by. */
  leaderEpochOf(topicId: string, partition: number): number;
}

export class ShareStateClient implements SharePersister {
  private readonly clients: BrokerClients;
  /** The state epoch of each share-partition as last read or written, sent back with its writes. */
  private readonly stateEpochs = new Map<string, number>();
  private closed = false;

  constructor(
    readonly coordinator: ShareCoordinator,
    private readonly opts: ShareStateClientOptions,
  ) {
    this.clients = new BrokerClients(`fjord-share-state-${opts.nodeId}`, opts.interBrokerSecurity, REQUEST_TIMEOUT_MS);
  }

  async read(groupId: string, topicId: string, partition: number): Promise<{ startOffset: number; stateBatches: readonly PersistedBatch[] } | null> {
    const key = shareStateKey(groupId, topicId, partition);
    const leaderEpoch = this.opts.leaderEpochOf(topicId, partition);
    const s = await this.withCoordinator(key, async (ep) => {
      if (ep === null) {
        const st = await this.coordinator.readState(groupId, topicId, partition);
        return st === null ? { stateEpoch: 0, startOffset: -1, stateBatches: [] } : st;
      }
      const res = await this.send(ep, ShareStateApis.ReadShareGroupState, { groupId, topics: [{ topicId, partitions: [{ partition, leaderEpoch }] }] });
      const r = res.results.find((t) => t.topicId === topicId)?.partitions.find((p) => p.partition === partition);
      if (r === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `ReadShareGroupState answered without ${key}`);
      if (r.errorCode !== ErrorCode.NONE) throw new KafkaError(r.errorCode, r.errorMessage ?? undefined);
      return {
        stateEpoch: r.stateEpoch,
        startOffset: Number(r.startOffset),
        stateBatches: r.stateBatches.map((b) => ({ firstOffset: Number(b.firstOffset), lastOffset: Number(b.lastOffset), deliveryState: b.deliveryState, deliveryCount: b.deliveryCount })),
      };
    });
    this.stateEpochs.set(key, s.stateEpoch);
    // Start offset -1 is a share-partition with no state (Kafka's UNINITIALIZED_START_OFFSET).
    return s.startOffset < 0 ? null : { startOffset: s.startOffset, stateBatches: s.stateBatches };
  }

  async write(groupId: string, topicId: string, partition: number, state: { startOffset: number; leaderEpoch: number; stateBatches: readonly PersistedBatch[] }): Promise<void> {
    const key = shareStateKey(groupId, topicId, partition);
    // State this node never read (AlterShareGroupOffsets replaces it whole) is written at the state
    // epoch the coordinator holds, which the group coordinator's InitializeShareGroupState set.
    const stateEpoch = this.stateEpochs.get(key) ?? (await this.readSummary(groupId, topicId, partition)).stateEpoch;
    // A write with no leader epoch of its own (a session released) is this node's, at the image's epoch.
    const leaderEpoch = state.leaderEpoch >= 0 ? state.leaderEpoch : this.opts.leaderEpochOf(topicId, partition);
    const code = await this.withCoordinator(key, async (ep) => {
      if (ep === null) {
        return this.coordinator.writeStateFenced(groupId, topicId, partition, { stateEpoch, snapshotEpoch: 0, leaderEpoch, startOffset: state.startOffset, stateBatches: state.stateBatches });
      }
      const res = await this.send(ep, ShareStateApis.WriteShareGroupState, {
        groupId,
        topics: [
          {
            topicId,
            partitions: [
              {
                partition,
                stateEpoch,
                leaderEpoch,
                startOffset: BigInt(state.startOffset),
                stateBatches: state.stateBatches.map((b) => ({ firstOffset: BigInt(b.firstOffset), lastOffset: BigInt(b.lastOffset), deliveryState: b.deliveryState, deliveryCount: b.deliveryCount })),
              },
            ],
          },
        ],
      });
      return this.partitionCode(res.results, topicId, partition, 'WriteShareGroupState');
    });
    if (code !== ErrorCode.NONE) throw new KafkaError(code);
  }

  /**
   * InitializeShareGroupState at the share-partition's coordinator, as the group coordinator sends
   * it (Kafka's GroupCoordinatorService.persisterInitialize): a new state epoch at `startOffset`
   * (-1: the share-partition resolves share.auto.offset.reset when it loads). Returns the Kafka
   * error code (FENCED_STATE_EPOCH: the coordinator holds a newer state epoch).
   */
  async initialize(groupId: string, topicId: string, partition: number, stateEpoch: number, startOffset: number): Promise<number> {
    const key = shareStateKey(groupId, topicId, partition);
    return this.withCoordinator(key, async (ep) => {
      if (ep === null) return this.coordinator.initializeState(groupId, topicId, partition, stateEpoch, startOffset);
      const res = await this.send(ep, ShareStateApis.InitializeShareGroupState, { groupId, topics: [{ topicId, partitions: [{ partition, stateEpoch, startOffset: BigInt(startOffset) }] }] });
      return this.partitionCode(res.results, topicId, partition, 'InitializeShareGroupState');
    });
  }

  async delete(groupId: string, topicId: string, partition: number): Promise<void> {
    const key = shareStateKey(groupId, topicId, partition);
    await this.withCoordinator(key, async (ep) => {
      if (ep === null) return this.coordinator.deleteState(groupId, topicId, partition);
      const res = await this.send(ep, ShareStateApis.DeleteShareGroupState, { groupId, topics: [{ topicId, partitions: [{ partition }] }] });
      const code = this.partitionCode(res.results, topicId, partition, 'DeleteShareGroupState');
      if (code !== ErrorCode.NONE) throw new KafkaError(code);
      return undefined;
    });
    this.stateEpochs.delete(key);
  }

  /** ReadShareGroupStateSummary at the share-partition's coordinator. */
  async readSummary(groupId: string, topicId: string, partition: number): Promise<ShareStateSummary> {
    const key = shareStateKey(groupId, topicId, partition);
    const leaderEpoch = this.opts.leaderEpochOf(topicId, partition);
    return this.withCoordinator(key, async (ep) => {
      if (ep === null) return (await this.coordinator.readSummary(groupId, topicId, partition)) ?? { stateEpoch: 0, leaderEpoch: -1, startOffset: -1, deliveryCompleteCount: -1 };
      const res = await this.send(ep, ShareStateApis.ReadShareGroupStateSummary, { groupId, topics: [{ topicId, partitions: [{ partition, leaderEpoch }] }] });
      const r = res.results.find((t) => t.topicId === topicId)?.partitions.find((p) => p.partition === partition);
      if (r === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `ReadShareGroupStateSummary answered without ${key}`);
      if (r.errorCode !== ErrorCode.NONE) throw new KafkaError(r.errorCode, r.errorMessage ?? undefined);
      return { stateEpoch: r.stateEpoch, leaderEpoch: r.leaderEpoch, startOffset: Number(r.startOffset), deliveryCompleteCount: r.deliveryCompleteCount };
    });
  }

  close(): void {
    this.closed = true;
    this.clients.close();
  }

  private partitionCode(results: readonly { topicId: string; partitions: readonly { partition: number; errorCode: number }[] }[], topicId: string, partition: number, api: string): number {
    const r = results.find((t) => t.topicId === topicId)?.partitions.find((p) => p.partition === partition);
    if (r === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `${api} answered without ${topicId}-${partition}`);
    // The coordinator moved or is loading: retried by withCoordinator.
    if (RETRY_ELSEWHERE.has(r.errorCode)) throw new KafkaError(r.errorCode);
    return r.errorCode;
  }

  /** Runs `op` against the key's coordinator: `null` when this node serves it, else its leader's endpoint. */
  private async withCoordinator<T>(key: string, op: (ep: CoordinatorEndpoint | null) => Promise<T>): Promise<T> {
    const p = this.coordinator.runtime.partitionFor(key);
    const deadline = Date.now() + RETRY_FOR_MS;
    for (let attempt = 0; ; attempt++) {
      let failure: unknown;
      let code: number;
      try {
        return await op(this.coordinatorNode(p));
      } catch (err) {
        failure = err;
        code = err instanceof KafkaError ? err.code : ErrorCode.NETWORK_EXCEPTION;
      }
      if (this.closed || !RETRY_ELSEWHERE.has(code) || Date.now() >= deadline) throw failure;
      await new Promise<void>((r) => setTimeout(r, Math.min(1000, 100 * 2 ** attempt)).unref());
    }
  }

  private coordinatorNode(p: number): CoordinatorEndpoint | null {
    const leadership = this.opts.leadership;
    if (leadership === undefined || this.coordinator.runtime.serves(p)) return null;
    const ep = leadership.leaderEndpoint(SHARE_GROUP_STATE, p);
    if (ep === null) {
      leadership.ensureTopic(SHARE_GROUP_STATE, this.coordinator.runtime.partitions);
      throw new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, `${SHARE_GROUP_STATE}-${p} has no leader`);
    }
    // Named leader here but not serving yet (the leader role is being taken): the local path answers, or retries.
    if (ep.nodeId === this.opts.nodeId) return null;
    return ep;
  }

  private async send<Req, Res>(ep: CoordinatorEndpoint, api: ApiSpec<Req, Res>, req: Req): Promise<Res> {
    const client = this.clients.clientFor(ep.nodeId, ep.host, ep.port);
    try {
      return await client.send(api, req);
    } catch (err) {
      if (err instanceof KafkaError) throw err;
      // Killed, restarting or cut off: a fresh connection next time.
      this.clients.forget(ep.nodeId);
      throw new KafkaError(ErrorCode.NETWORK_EXCEPTION, `share coordinator node ${ep.nodeId} unreachable: ${(err as Error).message}`);
    }
  }
}
