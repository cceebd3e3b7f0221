/**
 * The simulated surroundings of the mirror control plane: a destination cluster of a few nodes
 * (one metadata image written through an atomic controller write, partition and `__mirror_state`
 * leaders that move, nodes that crash and restart from what was persisted), the source cluster
 * (records, leader epochs, topic deletion and recreation, unreachability) and the destination logs.
 *
 * What runs on each node is the real code: MirrorManager (with its MirrorStateMachine and
 * MirrorStateActions), MirrorCoordinator on its CoordinatorRuntime, MirrorStateClient, ControlQueue
 * and MirrorControlPlane. The world answers them through their seams (MirrorHost, the runtime
 * factory, the state transport, timers), every answer a pending step of the scheduler.
 *
 * Simplifications, stated: a partition's replicas are one log (leader changes never lose or
 * diverge data), the mirror fetcher is a small stand-in that copies one source batch per fetch
 * (the real one has its own tests), and only source producers use transactions (a client's
 * writes to a stopped topic are plain batches). A node decides from its own
 * image of partition leaders and epochs, which lags the controller's until a metadata delivery
 * to it lands; a node that stops hearing from the controller (a fault) keeps its image through
 * any number of changes until it hears again, and leads no log meanwhile if it missed a change.
 */
import { PLAINTEXT_INTER_BROKER } from '../../../src/client/inter-broker-security.js';
import type { KafkaClient } from '../../../src/client/kafka-client.js';
import type { CoordinatorEndpoint, CoordinatorLeadership, CoordinatorLog } from '../../../src/coordinator/coordinator-host.js';
import { readCoordinatorBatches } from '../../../src/coordinator/coordinator-batch.js';
import type { MirrorTopicPartition } from '../../../src/fetcher/mirror-fetcher.js';
import type { MirrorAppendResult, MirrorLog } from '../../../src/fetcher/mirror-log.js';
import { ControlQueue } from '../../../src/mirror/control-queue.js';
import { validateMirrorOps, type Refusal } from '../../../src/mirror/desired-state-rules.js';
import { MirrorControlPlane } from '../../../src/mirror/mirror-control.js';
import { mirrorBrokerConfig } from '../../../src/mirror/mirror-config.js';
import { MIRROR_STATE_TOPIC, MirrorCoordinator, MirrorStateShard } from '../../../src/mirror/mirror-coordinator.js';
import type { MirrorControllerOp, MirrorControllerResult, MirrorHost, MirrorTopicBinding, OpenTransaction } from '../../../src/mirror/mirror-host.js';
import { MirrorManager } from '../../../src/mirror/mirror-manager.js';
import { MirrorPartitionState as S, type MirrorPartitionStateValue } from '../../../src/mirror/mirror-partition-state.js';
import type { MirrorRuntime, MirrorRuntimeEvents } from '../../../src/mirror/mirror-runtime.js';
import { MirrorStateClient, type MirrorStateTransport } from '../../../src/mirror/mirror-state-client.js';
import { MirrorInterBrokerRpcs } from '../../../src/mirror/inter-broker-rpcs.js';
import type { ApiSpec } from '../../../src/client/apis.js';
import { ApiKey } from '../../../src/protocol/generated/api-table.js';
import type { ReadMirrorStatesRequest } from '../../../src/protocol/generated/messages/read-mirror-states-request.js';
import type { WriteMirrorStatesRequest } from '../../../src/protocol/generated/messages/write-mirror-states-request.js';
import { ErrorCode } from '../../../src/protocol/generated/errors.js';
import { KafkaError } from '../../../src/protocol/kafka-error.js';
import { buildRecordBatch } from '../../../src/protocol/records.js';
import { controlTypeOf } from '../../../src/protocol/control-records.js';
import { iterateBatches } from '../../../src/protocol/record-batch.js';
import type { Scheduler } from './scheduler.js';
import { txnBatch, txnMarker, type TxnView } from './transactions.js';
import { SimInternalLog, SimLog } from './sim-log.js';

export const MIRROR = 'm1';
export const SOURCE_CLUSTER_ID = 'source-cluster';
export const DEST_CLUSTER_ID = 'dest-cluster';
export const STATE_PARTITIONS = 3;

/**
 * Decides a controller write again against the image it lands on: the real build step
 * (`validateMirrorOps`) by default; null applies the ops as they were asked (what a controller
 * without that step would do).
 */
export type OpsValidator = (world: World, ops: readonly MirrorControllerOp[]) => MirrorControllerOp[] | Refusal;

/** The real build step of the metadata write, over the simulated image. */
export const realValidator: OpsValidator = (world, ops) =>
  validateMirrorOps(
    {
      topicById: (id) => {
        const t = world.topicById(id);
        return t === undefined ? undefined : { name: t.name, binding: world.binding(t.name) };
      },
      mirrorExists: (m) => world.mirrors.has(m),
      boundTopicIds: (m) => world.bindings().filter((b) => b.mirrorName === m).map((b) => b.topicId),
    },
    ops,
  );

interface TopicMeta {
  readonly name: string;
  readonly id: string;
  leaders: number[];
  epochs: number[];
  binding: { mirrorName: string; desiredState: MirrorPartitionStateValue; lastStateChangeOffset: number } | null;
}

/** A topic's partition leaders and leader epochs as one node's metadata image has them. */
interface LeaderImage {
  readonly name: string;
  readonly leaders: readonly number[];
  readonly epochs: readonly number[];
}

export interface SourcePartition {
  batches: Buffer[];
  epoch: number;
  /** Each batch as a transaction reader sees it (./transactions.ts). */
  views: TxnView[];
  /** Producers with a transaction open here. */
  open: number[];
  nextProducerId: number;
}

/** What a producer does to a source partition: a plain batch, a transactional one, or ends a transaction. */
export type SourceWrite = 'plain' | 'txn' | 'commit' | 'abort';

function newSourcePartition(): SourcePartition {
  return { batches: [], epoch: 0, views: [], open: [], nextProducerId: 1000 };
}

export interface SourceTopic {
  name: string;
  id: string;
  partitions: SourcePartition[];
  deleted: boolean;
}


export class World {
  readonly nodes = new Map<number, SimNode>();
  readonly topics = new Map<string, TopicMeta>();
  readonly mirrors = new Map<string, Map<string, string>>();
  readonly logs = new Map<string, SimLog>();
  readonly stateLogs: SimInternalLog[] = [];
  /** What each `__mirror_state` partition holds, replayed from every committed batch. */
  readonly persisted: MirrorStateShard[] = [];
  stateLeaders: number[] = [];
  stateEpochs: number[] = [];
  offset = 0;
  readonly source = new Map<string, SourceTopic>();
  /** Every source topic there has been, by topic id (a deleted one keeps what it held). */
  readonly sourceById = new Map<string, SourceTopic>();
  sourceReachable = true;
  private uuidSeq = 0;
  readonly lines: string[] = [];
  /** Violations seen during the run (the invariants checked after every step). */
  readonly violations: string[] = [];

  constructor(
    readonly sched: Scheduler,
    readonly nodeIds: readonly number[],
    readonly validate: OpsValidator | null,
  ) {
    for (let p = 0; p < STATE_PARTITIONS; p++) {
      const log = new SimInternalLog((fn) => this.sched.op(`__mirror_state-${p} append`, -1, fn));
      const shard = new MirrorStateShard();
      log.onAppend = (bytes) => {
        for (const b of readCoordinatorBatches(bytes)) for (const r of b.records) shard.replay(r);
      };
      this.stateLogs.push(log);
      this.persisted.push(shard);
      this.stateLeaders.push(nodeIds[p % nodeIds.length]!);
      this.stateEpochs.push(0);
    }
    this.mirrors.set(MIRROR, new Map([
      // No usable address: a real client, should one be made, fails at once (a connection
      // attempt would finish in real time, and the run would not replay).
      ['bootstrap.servers', ','],
      ['mirror.source.cluster.id', SOURCE_CLUSTER_ID],
    ]));
  }

  say(line: string): void {
    this.lines.push(`[${this.sched.now}] ${line}`);
  }

  up(): SimNode[] {
    return [...this.nodes.values()].filter((n) => n.up);
  }

  log(topic: string, p: number): SimLog {
    const k = `${topic}-${p}`;
    let l = this.logs.get(k);
    if (l === undefined) this.logs.set(k, (l = new SimLog()));
    return l;
  }

  /**
   * The persisted state and last mirrored epoch of a partition, from `__mirror_state` itself; the
   * epoch as another cluster's lookup reads it (a stop that found nothing mirrored is -1).
   */
  persistedOf(topicId: string, p: number): { state: MirrorPartitionStateValue | null; retryAttempt: number; lme: number } {
    const shard = this.persisted[this.nodes.values().next().value!.coordinator.partitionFor(MIRROR, topicId, p)]!;
    const k = `${MIRROR}\u0000${topicId}\u0000${p}`;
    const v = shard.states.get(k)?.value;
    return { state: v?.state ?? null, retryAttempt: v?.retryAttempt ?? 0, lme: Math.max(-1, shard.lastMirrorEpochs.get(k)?.epoch ?? -1) };
  }

  // ------------------------------------------------------------------ metadata

  binding(name: string): MirrorTopicBinding | undefined {
    const t = this.topics.get(name);
    if (t?.binding == null) return undefined;
    return { topicName: t.name, topicId: t.id, mirrorName: t.binding.mirrorName, desiredState: t.binding.desiredState, lastStateChangeOffset: t.binding.lastStateChangeOffset };
  }

  bindings(): MirrorTopicBinding[] {
    return [...this.topics.keys()].map((n) => this.binding(n)).filter((b): b is MirrorTopicBinding => b !== undefined);
  }

  /** Every topic's partition leaders and leader epochs, by topic id, as the controller has them now. */
  leaderImage(): Map<string, LeaderImage> {
    return new Map([...this.topics.values()].map((t) => [t.id, { name: t.name, leaders: [...t.leaders], epochs: [...t.epochs] }]));
  }

  topicById(id: string): TopicMeta | undefined {
    for (const t of this.topics.values()) if (t.id === id) return t;
    return undefined;
  }

  /** The controller: validates against the image at its head and applies, all at once. */
  apply(asked: readonly MirrorControllerOp[]): MirrorControllerResult {
    const decided = this.validate === null ? asked : this.validate(this, asked);
    if (!Array.isArray(decided)) {
      const refused = decided as Refusal;
      return { errorCode: refused.code, errorMessage: refused.msg, metadataOffset: this.offset };
    }
    const ops: readonly MirrorControllerOp[] = decided;
    for (const op of ops) {
      if (op.type === 'createTopic' && (this.topics.has(op.name) || this.topicById(op.topicId) !== undefined)) return { errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, errorMessage: `${op.name} exists`, metadataOffset: this.offset };
      if (op.type === 'bumpLeaderEpoch' && op.whileMirrored === true) {
        const t = this.topicById(op.topicId);
        if (t?.binding != null && t.binding.desiredState === S.STOPPED) return { errorCode: ErrorCode.MIRROR_TOPIC_BEING_STOPPED, errorMessage: `${t.name} is being stopped`, metadataOffset: this.offset };
      }
    }
    for (const op of ops) {
      this.offset++;
      switch (op.type) {
        case 'createTopic': {
          const up = this.up().map((n) => n.id);
          const leaders = Array.from({ length: op.numPartitions }, (_, p) => up[p % up.length] ?? this.nodeIds[0]!);
          this.topics.set(op.name, { name: op.name, id: op.topicId, leaders, epochs: leaders.map(() => 0), binding: null });
          break;
        }
        case 'mirrorTopicState': {
          const t = this.topicById(op.topicId);
          if (t === undefined) break;
          t.binding = op.mirrorName === null ? null : { mirrorName: op.mirrorName, desiredState: op.desiredState, lastStateChangeOffset: this.offset };
          this.say(`metadata: ${t.name} desired ${op.desiredState}`);
          break;
        }
        case 'mirrorConfig': {
          let m = this.mirrors.get(op.mirrorName);
          if (m === undefined) this.mirrors.set(op.mirrorName, (m = new Map()));
          if (op.value === null) m.delete(op.name);
          else m.set(op.name, op.value);
          if (m.size === 0) this.mirrors.delete(op.mirrorName);
          break;
        }
        case 'bumpLeaderEpoch': {
          const t = this.topicById(op.topicId);
          if (t === undefined || t.epochs[op.partition] === undefined) break;
          if (op.leaderEpoch <= t.epochs[op.partition]!) break;
          t.epochs[op.partition] = op.leaderEpoch;
          const mirrored = t.binding !== null && t.binding.desiredState !== S.STOPPED;
          if (!mirrored) this.log(t.name, op.partition).assignEpoch(op.leaderEpoch);
          break;
        }
        default:
          break;
      }
    }
    this.notifyAll();
    return { errorCode: 0, metadataOffset: this.offset };
  }

  /** Every node hears of a metadata change on its own time. */
  notifyAll(): void {
    for (const n of this.up()) n.notifyLater();
  }

  /** A partition's leadership moves to another live node, at the next epoch (a failover). */
  moveLeader(name: string, p: number, to: number): void {
    const t = this.topics.get(name);
    if (t === undefined) return;
    t.leaders[p] = to;
    t.epochs[p] = (t.epochs[p] ?? 0) + 1;
    const mirrored = t.binding !== null && t.binding.desiredState !== S.STOPPED;
    if (!mirrored) this.log(t.name, p).assignEpoch(t.epochs[p]!);
    this.offset++;
    this.notifyAll();
  }

  moveStateLeader(p: number, to: number): void {
    this.stateLeaders[p] = to;
    this.stateEpochs[p] = (this.stateEpochs[p] ?? 0) + 1;
    this.offset++;
    for (const n of this.up()) n.leadershipChangedLater();
    this.notifyAll();
  }

  // ------------------------------------------------------------------ source

  /** Topic ids, from the run's own counter (a run never depends on the runs before it). */
  private uuid(): string {
    this.uuidSeq++;
    return `00000000-0000-4000-8000-${this.uuidSeq.toString(16).padStart(12, '0')}`;
  }

  sourceTopic(name: string): SourceTopic {
    let t = this.source.get(name);
    if (t === undefined) {
      t = { name, id: this.uuid(), partitions: [newSourcePartition(), newSourcePartition()], deleted: false };
      this.source.set(name, t);
      this.sourceById.set(t.id, t);
    }
    return t;
  }

  /**
   * A write to a source partition. A transactional one joins the open transaction `pick` chooses
   * (or opens a new one); a commit or an abort ends the open one `pick` chooses (none: nothing).
   */
  produceToSource(name: string, p: number, what: SourceWrite = 'plain', pick = 0): string | null {
    const t = this.source.get(name);
    const sp = t?.partitions[p];
    if (t === undefined || t.deleted || sp === undefined) return null;
    const offset = sp.batches.length;
    let batch: Buffer;
    let said: string;
    if (what === 'plain') {
      batch = buildRecordBatch({ baseOffset: offset, partitionLeaderEpoch: sp.epoch, now: 1000, records: [{ value: Buffer.from(`${name}-${p}-${offset}`) }] });
      said = 'a batch';
    } else if (what === 'txn') {
      const joins = pick % (sp.open.length + 1);
      const pid = joins < sp.open.length ? sp.open[joins]! : sp.nextProducerId++;
      if (joins >= sp.open.length) sp.open.push(pid);
      batch = txnBatch(offset, sp.epoch, pid, `${name}-${p}-${offset}`);
      said = `a batch of producer ${pid}'s transaction`;
    } else {
      if (sp.open.length === 0) return null;
      const [pid] = sp.open.splice(pick % sp.open.length, 1);
      batch = txnMarker(offset, sp.epoch, pid!, what === 'commit');
      said = `producer ${pid}'s ${what.toUpperCase()}`;
    }
    sp.batches.push(batch);
    for (const v of iterateBatches(batch)) {
      sp.views.push({ baseOffset: v.baseOffset, producerId: v.producerId, transactional: v.isTransactional, controlType: controlTypeOf(v) });
    }
    return said;
  }

  /** The source topic is deleted, and maybe created again under the same name (a new topic id). */
  deleteSourceTopic(name: string, recreate: boolean): void {
    const t = this.source.get(name);
    if (t === undefined) return;
    t.deleted = true;
    if (recreate) {
      const again = { name, id: this.uuid(), partitions: [newSourcePartition(), newSourcePartition()], deleted: false };
      this.source.set(name, again);
      this.sourceById.set(again.id, again);
    }
  }
}

/** The stand-in for the mirror fetcher: one fetch step per partition at a time, one batch each. */
class SimFetcher {
  private readonly parts = new Map<string, { tp: MirrorTopicPartition; busy: Promise<void>; fetching: boolean; failed: boolean }>();
  private cancel: (() => void) | null = null;
  private closed = false;

  constructor(
    private readonly node: SimNode,
    private readonly events: MirrorRuntimeEvents,
  ) {
    this.tick();
  }

  private tick(): void {
    if (this.closed) return;
    this.cancel = this.node.timers.schedule(100, () => {
      for (const p of this.parts.values()) if (!p.fetching && !p.failed) this.fetch(p);
      this.tick();
    });
  }

  private fetch(p: { tp: MirrorTopicPartition; busy: Promise<void>; fetching: boolean; failed: boolean }): void {
    const world = this.node.world;
    p.fetching = true;
    const k = `${p.tp.topic}:${p.tp.partition}`;
    const answered = world.sched.op(`fetch ${k} on ${this.node.id}`, this.node.id, () => {
      if (!world.sourceReachable) return null;
      const src = world.source.get(p.tp.topic);
      if (src === undefined || src.deleted || src.id !== p.tp.topicId) return 'gone' as const;
      const sp = src.partitions[p.tp.partition];
      return sp === undefined ? ('gone' as const) : { batches: [...sp.batches], epoch: sp.epoch };
    });
    p.busy = answered.then(async (answer) => {
      if (this.parts.get(k) !== p || answer === null) return;
      const key = this.events.keyFor(MIRROR, p.tp.topicId, p.tp.topic, p.tp.partition);
      if (answer === 'gone') {
        // A failed partition leaves the fetcher before the state machine is told, as the real
        // fetcher detaches it: a later MIRRORING (a reload at a new epoch) adds it again.
        this.parts.delete(k);
        p.failed = true;
        this.events.onPartitionFailed(key, new KafkaError(ErrorCode.UNKNOWN_TOPIC_ID, 'The source topic is deleted.'), true);
        return;
      }
      const log = this.node.partitionLog(p.tp.topic, p.tp.partition);
      if (log === undefined) return;
      const dle = this.node.leaderEpoch(p.tp.topic, p.tp.partition) ?? 0;
      if (answer.epoch > dle) {
        // The source's epoch passed ours: the state machine fences (EPOCH_FENCING bumps ours).
        this.parts.delete(k);
        p.failed = true;
        this.events.onEpochFenced(key, answer.epoch);
        return;
      }
      // Where the logs diverge (a failback, a source recreated in place), cut back first, as the
      // real fetcher's epoch truncation does.
      const sim = log as SimLog;
      let common = 0;
      for (const b of sim.batches) {
        if (!b.bytes.equals(answer.batches[b.baseOffset] ?? Buffer.alloc(0))) break;
        common = b.lastOffset + 1;
      }
      if (common < log.logEndOffset) await log.truncateTo(common);
      const next = answer.batches[log.logEndOffset];
      if (next === undefined) return;
      // The append lands only while this node still leads at an epoch the batch fits under (a
      // deposed leader's late append goes to its own replica, which its new leader overwrites).
      const r: MirrorAppendResult = await world.sched.op(`append ${k} on ${this.node.id}`, this.node.id, () => {
        if (!this.node.leadsNow(p.tp.topic, p.tp.partition) || this.parts.get(k) !== p) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, baseOffset: -1, lastOffset: -1 };
        return log.appendAsMirror(next);
      });
      if (r.errorCode === 0) this.events.onProgress(key);
    }).finally(() => {
      p.fetching = false;
    });
  }

  has(tp: MirrorTopicPartition): boolean {
    return this.parts.has(`${tp.topic}:${tp.partition}`);
  }
  addPartitions(tps: readonly MirrorTopicPartition[]): void {
    for (const tp of tps) {
      const k = `${tp.topic}:${tp.partition}`;
      if (!this.parts.has(k)) this.parts.set(k, { tp, busy: Promise.resolve(), fetching: false, failed: false });
    }
  }
  async removePartitions(tps: readonly MirrorTopicPartition[]): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const tp of tps) {
      const k = `${tp.topic}:${tp.partition}`;
      const p = this.parts.get(k);
      if (p === undefined) continue;
      this.parts.delete(k);
      waits.push(p.busy.catch(() => undefined));
    }
    await Promise.all(waits);
  }
  status(): undefined {
    return undefined;
  }
  async close(): Promise<void> {
    this.closed = true;
    this.cancel?.();
    this.parts.clear();
  }
}

/** One destination node: the real mirror code over a MirrorHost the world answers. */
export class SimNode implements MirrorHost {
  readonly host = 'sim';
  readonly port: number;
  get nodeId(): number {
    return this.id;
  }
  readonly clusterId = DEST_CLUSTER_ID;
  readonly interBrokerSecurity = PLAINTEXT_INTER_BROKER;
  readonly clock: { now(): number };
  readonly timers;
  readonly leadership: CoordinatorLeadership;
  up = true;
  private readonly listeners = new Set<() => void>();
  private readonly leadershipListeners = new Set<() => void>();
  readonly coordinator: MirrorCoordinator;
  readonly stateClient: MirrorStateClient;
  readonly manager: MirrorManager;
  readonly control: MirrorControlPlane;
  readonly interBroker: MirrorInterBrokerRpcs;
  /**
   * Who leads each partition, at which epoch, as this node's metadata image has it: taken when a
   * metadata delivery to this node completes (and at start), so behind the controller until then.
   * What the node decides reads it (its manager, its coordinator's fence); what lands on a log is
   * checked against the controller's (a deposed leader that has not heard yet appends nothing).
   */
  private image: Map<string, LeaderImage>;

  constructor(
    readonly world: World,
    readonly id: number,
  ) {
    const sched = world.sched;
    this.port = 9000 + id;
    this.clock = { now: () => sched.now };
    this.timers = sched.timersFor(id);
    this.leadership = {
      leads: (topic, p) => this.up && topic === MIRROR_STATE_TOPIC && world.stateLeaders[p] === id,
      leaderEndpoint: (topic, p) => {
        if (topic !== MIRROR_STATE_TOPIC) return null;
        const leader = world.nodes.get(world.stateLeaders[p] ?? -1);
        return leader?.up === true ? { nodeId: leader.id, host: leader.host, port: leader.port } : null;
      },
      leaderEpoch: (topic, p) => (topic === MIRROR_STATE_TOPIC ? (world.stateEpochs[p] ?? -1) : -1),
      ensureTopic: () => undefined,
      onChange: (cb) => {
        this.leadershipListeners.add(cb);
        return () => this.leadershipListeners.delete(cb);
      },
    };
    const config = mirrorBrokerConfig((k) =>
      ({
        'mirror.state.topic.num.partitions': String(STATE_PARTITIONS),
        'mirror.failed.retry.initial.backoff.ms': '500',
        'mirror.failed.retry.max.backoff.ms': '4000',
        // Never used up within a run: a FAILED that stays once faults heal is a non-retryable one.
        'mirror.failed.retry.max.attempts': '1000',
        'mirror.metadata.refresh.interval.ms': '1000000000',
      })[k],
    );
    this.image = world.leaderImage();
    this.coordinator = new MirrorCoordinator(this, STATE_PARTITIONS, (topicId, p) => this.image.get(topicId)?.epochs[p]);
    this.interBroker = new MirrorInterBrokerRpcs(this, this.coordinator);
    this.stateClient = new MirrorStateClient(this, this.coordinator, this.transport(), (fn) => sched.defer(`state request turn on ${id}`, id, fn));
    const say = (l: string): void => world.say(`node ${id}: ${l}`);
    this.manager = new MirrorManager(this, this.stateClient, config, say, say, {
      createRuntime: (_h, _c, name, _cfg, fingerprint, events) => this.runtime(name, fingerprint, events),
      syncGroups: () => sched.op(`group sync on ${id}`, id, () => undefined),
      syncConfigs: async () => undefined,
      defer: (fn) => sched.defer(`epoch bump turn on ${id}`, id, fn),
      random: () => 0.5,
    });
    // The control plane's requests to the source (its loop check before a start) go through the
    // simulated client, also before the manager has made the mirror's runtime.
    this.manager.sourceClient = () => this.sourceClient;
    const queue = new ControlQueue(this, () => this.manager.sync());
    this.control = new MirrorControlPlane(this, this.manager, queue);
  }

  start(): void {
    this.manager.start();
  }

  /** Crashed: nothing it had in flight completes; what it persisted stays. */
  crash(): void {
    this.up = false;
    this.world.sched.dropNode(this.id);
    void this.manager.close().catch(() => undefined);
    void this.coordinator.close().catch(() => undefined);
  }

  /** Whether a metadata delivery to this node is on its way (it brings the image as it is when it lands). */
  private delivering = false;

  /**
   * The client to the source: a request is a step of its own, and answers as a source without
   * the mirroring APIs would (the simulated source mirrors nothing back from here).
   */
  private readonly sourceClient = {
    sendIfSupported: () =>
      this.world.sched.op(`source request from ${this.id}`, this.id, () => {
        if (!this.world.sourceReachable) throw new KafkaError(ErrorCode.NETWORK_EXCEPTION, 'source unreachable');
        return null;
      }),
    close: () => undefined,
  } as unknown as KafkaClient;

  /**
   * Whether this node has stopped hearing from the controller (a slow or cut-off metadata fetch):
   * its image stays as it is, while everything else about it (its inter-broker requests, its
   * coordinator) goes on, until the stall ends and the delivery it missed lands.
   */
  private stalled = false;
  private missed = false;

  get metadataStalled(): boolean {
    return this.stalled;
  }

  stallMetadata(on: boolean): void {
    this.stalled = on;
    if (!on && this.missed) {
      this.missed = false;
      this.notifyLater();
    }
  }

  notifyLater(): void {
    if (this.stalled) {
      this.missed = true;
      return;
    }
    if (this.delivering) return;
    this.delivering = true;
    this.world.sched.defer(`metadata to ${this.id}`, this.id, () => {
      this.delivering = false;
      if (!this.up) return;
      this.image = this.world.leaderImage();
      for (const cb of [...this.listeners]) cb();
    });
  }

  leadershipChangedLater(): void {
    this.world.sched.defer(`leadership to ${this.id}`, this.id, () => {
      if (!this.up) return;
      for (const cb of [...this.leadershipListeners]) cb();
    });
  }

  /**
   * ReadMirrorStates / WriteMirrorStates to another node: the request, then its answer, are each a
   * step; the target answers through its real coordinator-side handler (MirrorInterBrokerRpcs).
   */
  private transport(): MirrorStateTransport {
    const world = this.world;
    const from = this.id;
    return {
      send<Req, Res>(ep: CoordinatorEndpoint, api: ApiSpec<Req, Res>, req: Req): Promise<Res> {
        const name = api.apiKey === ApiKey.WriteMirrorStates ? 'WriteMirrorStates' : 'ReadMirrorStates';
        return world.sched.op(`${name} ${from}→${ep.nodeId}`, from, async () => {
          const target = world.nodes.get(ep.nodeId);
          if (target === undefined || !target.up) throw new Error(`node ${ep.nodeId} is down`);
          let res: unknown;
          if (api.apiKey === ApiKey.WriteMirrorStates) {
            const r = req as WriteMirrorStatesRequest;
            res = { throttleTimeMs: 0, errorCode: 0, errorMessage: null, topics: await target.interBroker.writeMirrorStates(r.mirrorName, r.topics) };
          } else {
            const r = req as ReadMirrorStatesRequest;
            res = { throttleTimeMs: 0, errorCode: 0, errorMessage: null, topics: await target.interBroker.readMirrorStates(r.mirrorName, r.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => p.partitionIndex) }))) };
          }
          // The answer travels back as a step of its own.
          return world.sched.op(`${name} answer ${ep.nodeId}→${from}`, from, () => res as Res);
        });
      },
    };
  }

  private runtime(name: string, fingerprint: string, events: MirrorRuntimeEvents): MirrorRuntime {
    const sched = this.world.sched;
    return {
      name,
      fingerprint,
      client: this.sourceClient,
      fetcher: new SimFetcher(this, events),
      lookups: {
        hasMirrorLoop: () => sched.op(`loop check on ${this.id}`, this.id, () => {
          if (!this.world.sourceReachable) throw new KafkaError(ErrorCode.NETWORK_EXCEPTION, 'source unreachable');
          return false;
        }),
        lastMirrorEpoch: () => sched.op(`LME lookup on ${this.id}`, this.id, () => {
          if (!this.world.sourceReachable) throw new KafkaError(ErrorCode.NETWORK_EXCEPTION, 'source unreachable');
          return -1;
        }),
      },
      sourceClusterId: SOURCE_CLUSTER_ID,
    };
  }

  // ------------------------------------------------------------------ MirrorHost

  config(): string | undefined {
    return undefined;
  }
  /**
   * The shard's log as this node's replica of it: an append lands only while this node leads it
   * at the leader epoch it was asked at (a deposed coordinator's late append is refused, as its
   * replica is a follower by then; one asked before the node lost the shard and took it back is
   * refused too, as the real log's acks=all wait ends NOT_LEADER_OR_FOLLOWER when its leader of
   * that epoch resigns, rather than landing after the new leader's load has read the log).
   */
  async openInternalPartition(_topic: string, p: number): Promise<CoordinatorLog> {
    const log = this.world.stateLogs[p]!;
    const leadsAt = (epoch: number): boolean => this.up && this.world.stateLeaders[p] === this.id && this.world.stateEpochs[p] === epoch;
    return {
      get logStartOffset() {
        return log.logStartOffset;
      },
      get logEndOffset() {
        return log.logEndOffset;
      },
      readFrom: (offset) => log.readFrom(offset),
      append: (batch) => {
        const epoch = this.world.stateEpochs[p]!;
        return log.append(batch, () => leadsAt(epoch));
      },
    };
  }
  topicIdByName(name: string): string | undefined {
    return this.world.topics.get(name)?.id;
  }
  topicNameById(id: string): string | undefined {
    return this.world.topicById(id)?.name;
  }
  partitionCount(topic: string): number | undefined {
    return this.world.topics.get(topic)?.leaders.length;
  }
  topicNames(): string[] {
    return [...this.world.topics.keys()];
  }
  onMetadataChange(cb: () => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }
  metadataOffset(): number {
    return this.world.offset;
  }
  private imageOf(topic: string): LeaderImage | undefined {
    const id = this.world.topics.get(topic)?.id;
    return id === undefined ? undefined : this.image.get(id);
  }
  leaderEpoch(topic: string, p: number): number | undefined {
    return this.imageOf(topic)?.epochs[p];
  }
  isLocalLeader(topic: string, p: number): boolean {
    return this.up && this.imageOf(topic)?.leaders[p] === this.id;
  }
  /**
   * Whether this node leads the partition as the controller has it, at the epoch its own image
   * has (a log takes its appends only then). A node whose image lags by a leadership change it
   * missed is a zombie leader: what it appends at its old epoch would reach no replica of the
   * current one (acks=all never completes, and its own copy is truncated when it hears).
   */
  leadsNow(topic: string, p: number): boolean {
    const t = this.world.topics.get(topic);
    return this.up && t?.leaders[p] === this.id && this.imageOf(topic)?.epochs[p] === t.epochs[p];
  }
  /** The log, only to its leader as the controller has it (see leadsNow): a partition's replicas are one log here. */
  partitionLog(topic: string, p: number): MirrorLog | undefined {
    return this.leadsNow(topic, p) ? this.world.log(topic, p) : undefined;
  }
  /**
   * What the partition's producer state holds open, read from this node's replica of its log,
   * whether or not it leads it at this instant (a real node reads its local log's producer state;
   * only an append needs the leadership, see appendCoordinatorBatch).
   */
  openTransactions(topic: string, p: number): readonly OpenTransaction[] {
    return this.up ? this.world.log(topic, p).openTransactions() : [];
  }
  appendCoordinatorBatch(topic: string, p: number, batch: Buffer): Promise<MirrorAppendResult> {
    return this.world.sched.op(`marker ${topic}-${p} on ${this.id}`, this.id, () => {
      if (!this.leadsNow(topic, p)) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, baseOffset: -1, lastOffset: -1 };
      return this.world.log(topic, p).appendAsLeader(batch, this.world.topics.get(topic)?.epochs[p] ?? 0);
    });
  }
  mirrorTopicBindings(): readonly MirrorTopicBinding[] {
    return this.world.bindings();
  }
  mirrorTopicBinding(topic: string): MirrorTopicBinding | undefined {
    return this.world.binding(topic);
  }
  mirrorConfigs(): ReadonlyMap<string, ReadonlyMap<string, string>> {
    return this.world.mirrors;
  }
  /**
   * As MirrorHost asks: the answer comes once this node's image has the write. The image is
   * brought up to the controller's, and what listens to it hears of it then, as a node's
   * listeners hear of each record it applies (also while its metadata deliveries are stalled: the
   * node's image moved, so its manager sees leaderships its produce guard can see).
   */
  controllerWrite(ops: readonly MirrorControllerOp[]): Promise<MirrorControllerResult> {
    return this.world.sched.op(`controller write from ${this.id}`, this.id, () => {
      const r = this.world.apply(ops);
      this.image = this.world.leaderImage();
      if (this.up) for (const cb of [...this.listeners]) cb();
      return r;
    });
  }
}
