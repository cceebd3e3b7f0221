/**
 * How a mirror partition's leader reads and writes the partition's state (KIP-1279 spec §2, §7.4,
 * §8.9): at the mirror coordinator, the leader of the partition's `__mirror_state` partition. When
 * this node serves that shard the coordinator is called in-process; otherwise the state goes over
 * the wire to its leader as ReadMirrorStates / WriteMirrorStates, as the reference's
 * MirrorMetadataManager does. Both paths run the same fenced coordinator code
 * (`MirrorCoordinator.writeFenced`): a write carries the writer's leader epoch of the mirror
 * partition and a coordinator whose image knows a newer one refuses it with FENCED_LEADER_EPOCH,
 * so a deposed leader cannot overwrite what its successor persisted.
 *
 * Calls to another node's coordinator are gathered (./gathered-state-requests.ts): the reads and
 * the writes of every partition that asks within one turn, or while the previous request to that
 * node is out, go as one ReadMirrorStates or WriteMirrorStates, each partition answered with its
 * own code.
 *
 * NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS and lost connections
 * mean the shard moved or is loading: the leader is looked up again in the metadata image and the
 * call retried (100 ms doubling to 1 s, for up to `mirror.state.request.timeout.ms`-like 10 s);
 * after that the error reaches the caller, whose own retry (the state machine's) takes over.
 *
 * Concurrency contract: event loop only; one inter-broker connection per coordinator node.
 */
import type { ApiSpec } from '../client/apis.js';
import type { CoordinatorEndpoint } from '../coordinator/coordinator-host.js';
import { BrokerClients } from '../client/broker-clients.js';
import { ApiKey } from '../protocol/generated/api-table.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { encodeReadMirrorStatesRequest, type ReadMirrorStatesRequestInput } from '../protocol/generated/messages/read-mirror-states-request.js';
import { decodeReadMirrorStatesResponse, type ReadMirrorStatesResponse } from '../protocol/generated/messages/read-mirror-states-response.js';
import { encodeWriteMirrorStatesRequest, type WriteMirrorStatesRequestInput } from '../protocol/generated/messages/write-mirror-states-request.js';
import { decodeWriteMirrorStatesResponse, type WriteMirrorStatesResponse } from '../protocol/generated/messages/write-mirror-states-response.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { MIRROR_STATE_TOPIC, type MirrorCoordinator, type MirrorPartitionRecord, type MirrorStateEntry } from './mirror-coordinator.js';
import type { MirrorHost } from './mirror-host.js';
import { MirrorPartitionState as S, isMirrorPartitionState } from './mirror-partition-state.js';
import { StateRequestGatherer, type GatheredOutcome } from './gathered-state-requests.js';
import type { MirrorPartitionKey, MirrorStateStore, PersistedPartitionState } from './state-machine.js';

const READ_MIRROR_STATES: ApiSpec<ReadMirrorStatesRequestInput, ReadMirrorStatesResponse> = {
  apiKey: ApiKey.ReadMirrorStates,
  versions: [0, 0],
  encode: encodeReadMirrorStatesRequest,
  decode: decodeReadMirrorStatesResponse,
};

const WRITE_MIRROR_STATES: ApiSpec<WriteMirrorStatesRequestInput, WriteMirrorStatesResponse> = {
  apiKey: ApiKey.WriteMirrorStates,
  versions: [0, 0],
  encode: encodeWriteMirrorStatesRequest,
  decode: decodeWriteMirrorStatesResponse,
};

/** The coordinator moved, is loading or cannot be reached: look it up again and retry. */
const RETRY_ELSEWHERE: ReadonlySet<number> = new Set([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NETWORK_EXCEPTION, ErrorCode.REQUEST_TIMED_OUT]);
const RETRY_FOR_MS = 10_000;
/** The coordinator's acks=all append waits up to offsets.commit.timeout.ms (5 s); leave room for it. */
const REQUEST_TIMEOUT_MS = 15_000;

/**
 * How a ReadMirrorStates / WriteMirrorStates request reaches another node's coordinator: over the
 * inter-broker listener unless given (a simulated cluster hands it to that node's handler). A
 * failure to reach the node rejects with something other than a KafkaError.
 */
export interface MirrorStateTransport {
  send<Req, Res>(ep: CoordinatorEndpoint, api: ApiSpec<Req, Res>, req: Req): Promise<Res>;
}

/** One partition's read at another node's coordinator. */
interface RemoteRead {
  readonly topicId: string;
  readonly partition: number;
}

export class MirrorStateClient implements MirrorStateStore {
  private readonly clients: BrokerClients;
  private readonly transport: MirrorStateTransport | undefined;
  private readonly reads: StateRequestGatherer<RemoteRead, MirrorPartitionRecord>;
  private readonly writes: StateRequestGatherer<MirrorStateEntry, void>;
  private closed = false;

  /** `defer` runs the turn that gathers calls to another node (setImmediate, or a simulated scheduler's step). */
  constructor(
    private readonly host: MirrorHost,
    readonly coordinator: MirrorCoordinator,
    transport?: MirrorStateTransport,
    defer: (fn: () => void) => void = (fn) => void setImmediate(fn),
  ) {
    this.reads = new StateRequestGatherer(defer);
    this.writes = new StateRequestGatherer(defer);
    this.transport = transport;
    this.clients = new BrokerClients(`fjord-mirror-state-${host.nodeId}`, host.interBrokerSecurity, REQUEST_TIMEOUT_MS);
  }

  /**
   * MirrorStateStore: persists one partition's state, fenced by `leaderEpoch`, the epoch the
   * writer leads the partition under (a deposed leader's late write carries its old one).
   */
  async writeState(key: MirrorPartitionKey, value: PersistedPartitionState, leaderEpoch?: number): Promise<void> {
    const { topicId, partition } = key;
    await this.write(key.mirrorName, [leaderEpoch === undefined ? { topicId, partition, state: value } : { topicId, partition, state: value, leaderEpoch }]);
  }

  /**
   * Writes states and/or last mirrored epochs, each at its coordinator; resolves when all are
   * committed. An entry without `leaderEpoch` is fenced with the node's image.
   */
  async write(mirrorName: string, entries: readonly (Omit<MirrorStateEntry, 'leaderEpoch'> & { readonly leaderEpoch?: number })[]): Promise<void> {
    // One partition's write (each state transition, each last mirrored epoch) is the common
    // case: it goes straight to its coordinator, without the grouping below.
    if (entries.length === 1) {
      const e = this.fenced(entries[0]!);
      await this.writeAt(this.coordinator.partitionFor(mirrorName, e.topicId, e.partition), mirrorName, [e]);
      return;
    }
    const byShard = new Map<number, MirrorStateEntry[]>();
    for (const entry of entries) {
      const e = this.fenced(entry);
      const p = this.coordinator.partitionFor(mirrorName, e.topicId, e.partition);
      let list = byShard.get(p);
      if (list === undefined) byShard.set(p, (list = []));
      list.push(e);
    }
    await Promise.all([...byShard].map(([p, list]) => this.writeAt(p, mirrorName, list)));
  }

  /** The entry with the leader epoch it is fenced with: its own, else the node's image's. */
  private fenced(e: Omit<MirrorStateEntry, 'leaderEpoch'> & { readonly leaderEpoch?: number }): MirrorStateEntry {
    if (e.leaderEpoch !== undefined) return e as MirrorStateEntry;
    const topic = this.host.topicNameById(e.topicId);
    return { ...e, leaderEpoch: topic === undefined ? -1 : (this.host.leaderEpoch(topic, e.partition) ?? -1) };
  }

  private writeAt(p: number, mirrorName: string, list: readonly MirrorStateEntry[]): Promise<void> {
    return this.withCoordinator(p, RETRY_FOR_MS, (ep) => (ep === null ? this.coordinator.writeFenced(mirrorName, list) : this.remoteWrite(ep, mirrorName, list)));
  }

  /** `retryForMs`: how long to keep retrying a moving coordinator (0: one attempt, the caller retries). */
  async read(mirrorName: string, topicId: string, partition: number, retryForMs = RETRY_FOR_MS): Promise<MirrorPartitionRecord> {
    const p = this.coordinator.partitionFor(mirrorName, topicId, partition);
    return this.withCoordinator(p, retryForMs, (ep) => (ep === null ? this.coordinator.read(mirrorName, topicId, partition) : this.remoteRead(ep, mirrorName, topicId, partition)));
  }

  /** Tombstones what this node's shards hold of a deleted mirror (every node does so for its own). */
  tombstoneMirror(mirrorName: string): Promise<number> {
    return this.coordinator.tombstoneMirror(mirrorName);
  }

  close(): void {
    this.closed = true;
    this.clients.close();
  }

  /**
   * Runs `op` against the coordinator of `__mirror_state` partition `p`: `null` when this node
   * serves it, else the leader's endpoint. Retries while the shard is moving (see the header).
   */
  private async withCoordinator<T>(p: number, retryForMs: number, op: (ep: CoordinatorEndpoint | null) => Promise<T>): Promise<T> {
    const deadline = this.host.clock.now() + retryForMs;
    for (let attempt = 0; ; attempt++) {
      let code: number;
      let failure: unknown;
      try {
        return await op(this.coordinatorNode(p));
      } catch (err) {
        failure = err;
        code = err instanceof KafkaError ? err.code : ErrorCode.NETWORK_EXCEPTION;
      }
      if (this.closed || !RETRY_ELSEWHERE.has(code) || this.host.clock.now() >= deadline) throw failure;
      await new Promise<void>((r) => this.host.timers.schedule(Math.min(1000, 100 * 2 ** attempt), r));
    }
  }

  /** null: served here (or a node alone); otherwise the node the image names as the shard's leader. */
  private coordinatorNode(p: number): CoordinatorEndpoint | null {
    const leadership = this.host.leadership;
    if (leadership === undefined || this.coordinator.runtime.serves(p)) return null;
    const ep = leadership.leaderEndpoint(MIRROR_STATE_TOPIC, p);
    if (ep === null) {
      leadership.ensureTopic(MIRROR_STATE_TOPIC, this.coordinator.runtime.partitions);
      throw new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, `${MIRROR_STATE_TOPIC}-${p} has no leader`);
    }
    // Named leader here but not serving yet (the replication role is being taken): the local path answers it.
    if (ep.nodeId === this.host.nodeId) return null;
    return ep;
  }

  private async send<Req, Res>(ep: CoordinatorEndpoint, api: ApiSpec<Req, Res>, req: Req): Promise<Res> {
    const nodeId = ep.nodeId;
    try {
      if (this.transport !== undefined) return await this.transport.send(ep, api, req);
      return await this.clients.clientFor(nodeId, ep.host, ep.port).send(api, req);
    } catch (err) {
      if (err instanceof KafkaError) throw err;
      // Killed, restarting or cut off: a fresh connection next time.
      this.clients.forget(nodeId);
      throw new KafkaError(ErrorCode.NETWORK_EXCEPTION, `mirror coordinator node ${nodeId} unreachable: ${(err as Error).message}`);
    }
  }

  private remoteRead(ep: CoordinatorEndpoint, mirrorName: string, topicId: string, partition: number): Promise<MirrorPartitionRecord> {
    return this.reads.submit(`${ep.nodeId}\u0000${mirrorName}`, `${topicId}:${partition}`, { topicId, partition }, (calls) => this.sendReads(ep, mirrorName, calls));
  }

  private async remoteWrite(ep: CoordinatorEndpoint, mirrorName: string, entries: readonly MirrorStateEntry[]): Promise<void> {
    await Promise.all(entries.map((e) => this.writes.submit(`${ep.nodeId}\u0000${mirrorName}`, `${e.topicId}:${e.partition}`, e, (calls) => this.sendWrites(ep, mirrorName, calls))));
  }

  /** One ReadMirrorStates for gathered reads; each answered with its partition's outcome. */
  private async sendReads(ep: CoordinatorEndpoint, mirrorName: string, calls: readonly RemoteRead[]): Promise<GatheredOutcome<MirrorPartitionRecord>[]> {
    const { names, byTopic } = this.byTopicName(calls);
    const answers = new Map<string, ReadMirrorStatesResponse['topics'][number]['partitions'][number]>();
    if (byTopic.size > 0) {
      const res = await this.send(ep, READ_MIRROR_STATES, { mirrorName, topics: [...byTopic].map(([name, ps]) => ({ name, partitions: ps.map((c) => ({ partitionIndex: c.partition })) })) });
      if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, res.errorMessage ?? undefined);
      for (const t of res.topics) for (const r of t.partitions) answers.set(`${t.name}\u0000${r.partitionIndex}`, r);
    }
    return calls.map((c, i): GatheredOutcome<MirrorPartitionRecord> => {
      const r = answerFor(answers, names[i], c, 'ReadMirrorStates');
      if (r instanceof KafkaError) return { ok: false, error: r };
      const stored = r.state !== S.UNKNOWN && isMirrorPartitionState(r.state);
      return {
        ok: true,
        value: {
          state: stored ? { state: r.state as PersistedPartitionState['state'], previousState: isMirrorPartitionState(r.previousState) ? r.previousState : S.UNKNOWN, retryAttempt: r.retryAttempt, errorMessage: r.errorMessage } : null,
          lastMirrorEpoch: r.lastMirrorEpoch,
        },
      };
    });
  }

  /** One WriteMirrorStates for gathered writes; each answered with its partition's outcome. */
  private async sendWrites(ep: CoordinatorEndpoint, mirrorName: string, entries: readonly MirrorStateEntry[]): Promise<GatheredOutcome<void>[]> {
    const { names, byTopic } = this.byTopicName(entries);
    const answers = new Map<string, { errorCode: number; errorMessage: string | null }>();
    if (byTopic.size > 0) {
      const res = await this.send(ep, WRITE_MIRROR_STATES, {
        mirrorName,
        stoppedTopics: [],
        topics: [...byTopic].map(([name, list]) => ({
          name,
          partitions: list.map((e) => ({
            partitionIndex: e.partition,
            lastMirrorEpoch: e.lastMirrorEpoch ?? -1,
            // UNKNOWN: only the last mirrored epoch is written (a leader never persists UNKNOWN).
            state: e.state?.state ?? S.UNKNOWN,
            leaderEpoch: e.leaderEpoch,
            previousState: e.state?.previousState ?? S.UNKNOWN,
            retryAttempt: e.state?.retryAttempt ?? 0,
            errorMessage: e.state?.errorMessage ?? null,
          })),
        })),
      });
      if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, res.errorMessage ?? undefined);
      for (const t of res.topics) for (const p of t.partitions) answers.set(`${t.name}\u0000${p.partitionIndex}`, p);
    }
    return entries.map((e, i): GatheredOutcome<void> => {
      const p = answerFor(answers, names[i], e, 'WriteMirrorStates');
      return p instanceof KafkaError ? { ok: false, error: p } : { ok: true, value: undefined };
    });
  }

  /** Each call's topic name (undefined: the id is unknown here), and the calls by topic name in order. */
  private byTopicName<T extends { readonly topicId: string }>(calls: readonly T[]): { names: (string | undefined)[]; byTopic: Map<string, T[]> } {
    const names = calls.map((c) => this.host.topicNameById(c.topicId));
    const byTopic = new Map<string, T[]>();
    calls.forEach((c, i) => {
      const name = names[i];
      if (name !== undefined) pushTo(byTopic, name, c);
    });
    return { names, byTopic };
  }
}

/** A gathered call's own answer, or the error it gets: an unknown topic id, a missing answer, or the partition's error code. */
function answerFor<A extends { readonly errorCode: number; readonly errorMessage: string | null }>(
  answers: ReadonlyMap<string, A>,
  name: string | undefined,
  call: { readonly topicId: string; readonly partition: number },
  api: string,
): A | KafkaError {
  if (name === undefined) return new KafkaError(ErrorCode.UNKNOWN_TOPIC_ID, `unknown topic id ${call.topicId}`);
  const a = answers.get(`${name}\u0000${call.partition}`);
  if (a === undefined) return new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `${api} answered without ${name}-${call.partition}`);
  if (a.errorCode !== ErrorCode.NONE) return new KafkaError(a.errorCode, a.errorMessage ?? `${api} failed for ${name}-${call.partition}`);
  return a;
}

function pushTo<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  let list = m.get(k);
  if (list === undefined) m.set(k, (list = []));
  list.push(v);
}
