/**
 * An in-process stand-in for the node around the mirroring code (the thing under test): a
 * metadata image with an offset per change, the controller's writes applied atomically, and
 * real partition logs on disk for mirror topics and `__mirror_state`. The real node implements the
 * same MirrorHost; this one lets the control plane be tested before and beside it.
 */
import { realTimers, systemClock } from '../../../src/common/time.js';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { PLAINTEXT_INTER_BROKER } from '../../../src/client/inter-broker-security.js';
import { coordinatorLogOf } from '../../../src/coordinator/partition-log-adapter.js';
import type { CoordinatorLog } from '../../../src/coordinator/coordinator-host.js';
import type { MirrorAppendResult, MirrorLog } from '../../../src/fetcher/mirror-log.js';
import type { MirrorControllerOp, MirrorControllerResult, MirrorHost, MirrorTopicBinding, OpenTransaction } from '../../../src/mirror/mirror-host.js';
import { validateMirrorOps, type MirrorImageView } from '../../../src/mirror/desired-state-rules.js';
import { MirrorPartitionState } from '../../../src/mirror/mirror-partition-state.js';
import { ErrorCode } from '../../../src/protocol/generated/errors.js';
import { logConfig } from '../../../src/storage/log-config.js';
import { PartitionLog } from '../../../src/storage/partition-log.js';

interface TopicInfo {
  name: string;
  id: string;
  partitions: PartitionLog[];
  epochs: number[];
  mirrorName: string | null;
  desiredState: number;
  lastStateChangeOffset: number;
}

export class MirrorTestHost implements MirrorHost {
  readonly nodeId = 1;
  readonly host = '127.0.0.1';
  readonly port = 0;
  readonly clock = systemClock;
  readonly timers = realTimers;
  readonly clusterId = randomUUID();
  /** A test host's node talks plaintext to itself. */
  readonly interBrokerSecurity = PLAINTEXT_INTER_BROKER;
  private offset = 0;
  private readonly topics = new Map<string, TopicInfo>();
  private readonly internal = new Map<string, PartitionLog>();
  private readonly mirrors = new Map<string, Map<string, string>>();
  private readonly listeners = new Set<() => void>();
  readonly controllerLog: MirrorControllerOp[][] = [];

  constructor(
    readonly dataDir: string,
    private readonly brokerConfig: Record<string, string> = {},
  ) {}

  config(key: string): string | undefined {
    return this.brokerConfig[key];
  }

  /** Fault injection: while true, every append to an internal partition fails with KAFKA_STORAGE_ERROR. */
  failInternalAppends = false;
  /** Appends refused so far by `failInternalAppends`. */
  failedInternalAppends = 0;

  async openInternalPartition(topic: string, partition: number): Promise<CoordinatorLog> {
    const k = `${topic}-${partition}`;
    let log = this.internal.get(k);
    if (log === undefined) {
      log = await PartitionLog.open({ dir: join(this.dataDir, k), topicId: randomUUID(), config: logConfig({ cleanupPolicy: ['compact'] }) });
      this.internal.set(k, log);
    }
    const real = coordinatorLogOf(log);
    return {
      get logStartOffset() {
        return real.logStartOffset;
      },
      get logEndOffset() {
        return real.logEndOffset;
      },
      readFrom: (offset, maxBytes) => real.readFrom(offset, maxBytes),
      append: async (batch) => {
        if (!this.failInternalAppends) return real.append(batch);
        this.failedInternalAppends++;
        return { errorCode: ErrorCode.KAFKA_STORAGE_ERROR, baseOffset: -1, lastOffset: -1 };
      },
    };
  }

  topicIdByName(name: string): string | undefined {
    return this.topics.get(name)?.id;
  }
  topicNameById(id: string): string | undefined {
    for (const t of this.topics.values()) if (t.id === id) return t.name;
    return undefined;
  }
  partitionCount(topic: string): number | undefined {
    return this.topics.get(topic)?.partitions.length;
  }
  topicNames(): string[] {
    return [...this.topics.keys()];
  }
  onMetadataChange(cb: () => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }
  metadataOffset(): number {
    return this.offset;
  }
  leaderEpoch(topic: string, partition: number): number | undefined {
    return this.topics.get(topic)?.epochs[partition];
  }
  isLocalLeader(topic: string, partition: number): boolean {
    return this.topics.get(topic)?.partitions[partition] !== undefined;
  }
  partitionLog(topic: string, partition: number): MirrorLog | undefined {
    const log = this.topics.get(topic)?.partitions[partition];
    const gate = this.gates.get(`${topic}-${partition}`);
    if (log === undefined || gate === undefined) return log;
    // The same log, whose mirror appends wait at the gate.
    return new Proxy(log, {
      get: (target, prop) => {
        if (prop === 'appendAsMirror') {
          return async (records: Buffer) => {
            gate.arrive();
            await gate.opened;
            return target.appendAsMirror(records);
          };
        }
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }

  private readonly gates = new Map<string, { arrive: () => void; opened: Promise<void> }>();

  /**
   * From now on the partition's mirror appends wait until `release()`: `reached` resolves when
   * the first one is waiting (an append in flight, as the fetcher sees it).
   */
  gateMirrorAppends(topic: string, partition: number): { reached: Promise<void>; release: () => void } {
    let arrive!: () => void;
    let open!: () => void;
    const reached = new Promise<void>((r) => (arrive = r));
    const opened = new Promise<void>((r) => (open = r));
    const k = `${topic}-${partition}`;
    this.gates.set(k, { arrive, opened });
    return {
      reached,
      release: () => {
        this.gates.delete(k);
        open();
      },
    };
  }
  /** The real log, for tests that look further than MirrorLog. */
  log(topic: string, partition: number): PartitionLog {
    const l = this.topics.get(topic)?.partitions[partition];
    if (l === undefined) throw new Error(`no ${topic}-${partition}`);
    return l;
  }
  openTransactions(topic: string, partition: number): readonly OpenTransaction[] {
    const log = this.topics.get(topic)?.partitions[partition];
    if (log === undefined) return [];
    const open = new Set(log.ongoingTransactions().map((t) => t.producerId));
    return log
      .producerStates()
      .filter((p) => open.has(p.producerId))
      .map((p) => ({ producerId: p.producerId, producerEpoch: p.producerEpoch, coordinatorEpoch: Math.max(0, p.coordinatorEpoch) }));
  }
  async appendCoordinatorBatch(topic: string, partition: number, batch: Buffer): Promise<MirrorAppendResult> {
    const t = this.topics.get(topic);
    const log = t?.partitions[partition];
    if (t === undefined || log === undefined) return { errorCode: 3, baseOffset: -1, lastOffset: -1 };
    return log.appendAsLeader(batch, t.epochs[partition] ?? 0, { origin: 'coordinator', requiredAcks: -1 });
  }
  /** Client produce at the current leader epoch, as the node would (after its read-only check). */
  async produce(topic: string, partition: number, batch: Buffer): Promise<MirrorAppendResult> {
    const t = this.topics.get(topic);
    const log = t?.partitions[partition];
    if (t === undefined || log === undefined) return { errorCode: 3, baseOffset: -1, lastOffset: -1 };
    return log.appendAsLeader(batch, t.epochs[partition] ?? 0, { requiredAcks: -1 });
  }
  mirrorTopicBindings(): readonly MirrorTopicBinding[] {
    const out: MirrorTopicBinding[] = [];
    for (const t of this.topics.values()) {
      if (t.mirrorName === null) continue;
      out.push({ topicName: t.name, topicId: t.id, mirrorName: t.mirrorName, desiredState: t.desiredState as never, lastStateChangeOffset: t.lastStateChangeOffset });
    }
    return out;
  }
  mirrorTopicBinding(topic: string): MirrorTopicBinding | undefined {
    const t = this.topics.get(topic);
    if (t === undefined || t.mirrorName === null) return undefined;
    return { topicName: t.name, topicId: t.id, mirrorName: t.mirrorName, desiredState: t.desiredState as never, lastStateChangeOffset: t.lastStateChangeOffset };
  }
  mirrorConfigs(): ReadonlyMap<string, ReadonlyMap<string, string>> {
    return this.mirrors;
  }

  /** Creates an ordinary local topic (not through the mirror). */
  async createTopic(name: string, partitions: number, id: string = randomUUID()): Promise<void> {
    await this.controllerWrite([{ type: 'createTopic', name, topicId: id, numPartitions: partitions, configs: new Map() }]);
  }

  private imageView(): MirrorImageView {
    const byId = (id: string): TopicInfo | undefined => [...this.topics.values()].find((t) => t.id === id);
    return {
      topicById: (id) => {
        const t = byId(id);
        if (t === undefined) return undefined;
        return { name: t.name, binding: t.mirrorName === null ? undefined : { topicName: t.name, mirrorName: t.mirrorName, desiredState: t.desiredState as MirrorTopicBinding['desiredState'], lastStateChangeOffset: t.lastStateChangeOffset } };
      },
      mirrorExists: (name) => this.mirrors.has(name),
      boundTopicIds: (name) => [...this.topics.values()].filter((t) => t.mirrorName === name).map((t) => t.id),
      mirrorConfig: (name) => this.mirrors.get(name),
    };
  }

  async controllerWrite(asked: readonly MirrorControllerOp[]): Promise<MirrorControllerResult> {
    // The real node's build step first: the desired-state rules against the image as it is now.
    const ops = validateMirrorOps(this.imageView(), asked);
    if (!Array.isArray(ops)) return { errorCode: ops.code, errorMessage: ops.msg, metadataOffset: this.offset };
    // Validate everything first: the batch is all or nothing.
    for (const op of ops) {
      if (op.type === 'createTopic' && (this.topics.has(op.name) || this.topicNameById(op.topicId) !== undefined)) {
        return { errorCode: 36, errorMessage: `topic ${op.name} exists`, metadataOffset: this.offset };
      }
      if (op.type === 'bumpLeaderEpoch' && op.whileMirrored === true) {
        const name = this.topicNameById(op.topicId);
        const t = name === undefined ? undefined : this.topics.get(name);
        if (t !== undefined && t.mirrorName !== null && t.desiredState === MirrorPartitionState.STOPPED) {
          return { errorCode: ErrorCode.MIRROR_TOPIC_BEING_STOPPED, errorMessage: `${t.name} is being stopped`, metadataOffset: this.offset };
        }
      }
    }
    this.controllerLog.push([...ops]);
    for (const op of ops) {
      this.offset++;
      switch (op.type) {
        case 'createTopic': {
          const partitions: PartitionLog[] = [];
          for (let p = 0; p < op.numPartitions; p++) {
            partitions.push(await PartitionLog.open({ dir: join(this.dataDir, `${op.name}-${p}`), topicId: op.topicId, config: logConfig() }));
          }
          this.topics.set(op.name, {
            name: op.name,
            id: op.topicId,
            partitions,
            epochs: partitions.map(() => 0),
            mirrorName: null,
            desiredState: MirrorPartitionState.UNKNOWN,
            lastStateChangeOffset: -1,
          });
          break;
        }
        case 'mirrorTopicState': {
          const name = this.topicNameById(op.topicId);
          const t = name === undefined ? undefined : this.topics.get(name);
          if (t === undefined) break;
          t.mirrorName = op.mirrorName;
          t.desiredState = op.desiredState;
          t.lastStateChangeOffset = this.offset;
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
          const name = this.topicNameById(op.topicId);
          const t = name === undefined ? undefined : this.topics.get(name);
          const log = t?.partitions[op.partition];
          if (t === undefined || log === undefined || t.epochs[op.partition] === undefined) break;
          t.epochs[op.partition] = op.leaderEpoch;
          // As the node's replica manager: a topic being mirrored (bound, not STOPPED) keeps only
          // source epochs in its epoch cache; otherwise a bump starts the new epoch at the log end.
          const holdsSourceEpochs = t.mirrorName !== null && t.desiredState !== MirrorPartitionState.STOPPED;
          if (!holdsSourceEpochs && op.leaderEpoch > log.latestEpoch) await log.assignEpochStartOffset(op.leaderEpoch, log.logEndOffset);
          break;
        }
      }
    }
    for (const cb of this.listeners) cb();
    return { errorCode: 0, metadataOffset: this.offset };
  }

  async close(): Promise<void> {
    for (const t of this.topics.values()) for (const l of t.partitions) await l.close().catch(() => undefined);
    for (const l of this.internal.values()) await l.close().catch(() => undefined);
  }
}
