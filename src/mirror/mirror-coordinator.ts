/**
 * The cluster-mirror coordinator on `__mirror_state` (KIP-1279 spec §2, §3.2), on the shared
 * coordinator runtime: per mirror partition a MirrorPartitionState record (state, previous state,
 * retry attempt, error) and a LastMirrorEpochs record, keyed by (mirror, topic id, partition).
 * The `__mirror_state` partition of a key is `hash("mirror:topicId:partition") mod N` with Java's
 * String.hashCode, the topic id in Kafka's base64 form, as the reference does.
 *
 * A write's records are applied, appended as one batch and reverted if the append fails (the
 * runtime's contract); reads see committed state only, so what a read returns is always what a
 * replay of the topic gives. Deleting a mirror
 * writes tombstones for every key it has.
 *
 * Concurrency contract: writes of one `__mirror_state` partition are serialised by the runtime.
 */
import type { CoordinatorHost } from '../coordinator/coordinator-host.js';
import type { CoordinatorRecord, ReplayedRecord } from '../coordinator/coordinator-batch.js';
import { CoordinatorRuntime, partitionForKey, type CoordinatorShard } from '../coordinator/coordinator-runtime.js';
import { SnapshotMap, SnapshotRegistry } from '../coordinator/snapshot-registry.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { Reader } from '../protocol/reader.js';
import { Writer } from '../protocol/writer.js';
import { decodeLastMirrorEpochsKey, encodeLastMirrorEpochsKey } from '../protocol/generated/messages/last-mirror-epochs-key.js';
import { decodeLastMirrorEpochsValue, encodeLastMirrorEpochsValue } from '../protocol/generated/messages/last-mirror-epochs-value.js';
import { decodeMirrorPartitionStateKey, encodeMirrorPartitionStateKey } from '../protocol/generated/messages/mirror-partition-state-key.js';
import { decodeMirrorPartitionStateValue, encodeMirrorPartitionStateValue } from '../protocol/generated/messages/mirror-partition-state-value.js';
import { MirrorPartitionState, isMirrorPartitionState, type MirrorPartitionStateValue } from './mirror-partition-state.js';
import type { MirrorPartitionKey, MirrorStateStore, PersistedPartitionState } from './state-machine.js';

export const MIRROR_STATE_TOPIC = '__mirror_state';
const DEFAULT_MIRROR_STATE_PARTITIONS = 50;

const RECORD_LAST_MIRROR_EPOCHS = 1;
const RECORD_MIRROR_PARTITION_STATE = 2;

/** Topic ids in Kafka's form, by the id as Fjord writes it; cleared whole when it grows past the bound. */
const kafkaTopicIds = new Map<string, string>();
const KAFKA_TOPIC_IDS_BOUND = 100_000;

/** Kafka's Uuid.toString(): base64url without padding. */
export function uuidToKafkaString(uuid: string): string {
  let s = kafkaTopicIds.get(uuid);
  if (s === undefined) {
    s = Buffer.from(uuid.replace(/-/g, ''), 'hex').toString('base64url');
    if (kafkaTopicIds.size >= KAFKA_TOPIC_IDS_BOUND) kafkaTopicIds.clear();
    kafkaTopicIds.set(uuid, s);
  }
  return s;
}

export function mirrorStateKeyString(mirrorName: string, topicId: string, partition: number): string {
  return `${mirrorName}:${uuidToKafkaString(topicId)}:${partition}`;
}

interface StoredKey {
  readonly mirrorName: string;
  readonly topicId: string;
  readonly partition: number;
}

function mapKey(k: StoredKey): string {
  return `${k.mirrorName}\u0000${k.topicId}\u0000${k.partition}`;
}

function encodeKey(type: number, k: StoredKey): Buffer {
  const w = new Writer(64);
  w.int16(type);
  if (type === RECORD_LAST_MIRROR_EPOCHS) encodeLastMirrorEpochsKey(w, k, 0);
  else encodeMirrorPartitionStateKey(w, k, 0);
  return w.toBuffer();
}

/** `leaderEpoch`: the fenced writer's leader epoch of the partition, kept as a tagged field (-1: none). */
function stateRecord(k: StoredKey, v: PersistedPartitionState | null, leaderEpoch = -1): CoordinatorRecord {
  let value: Buffer | null = null;
  if (v !== null) {
    const w = new Writer(64);
    w.int16(0);
    encodeMirrorPartitionStateValue(w, { state: v.state, previousState: v.previousState, retryAttempt: v.retryAttempt, errorMessage: v.errorMessage, leaderEpoch }, 0);
    value = w.toBuffer();
  }
  return { key: encodeKey(RECORD_MIRROR_PARTITION_STATE, k), value };
}

function lastMirrorEpochRecord(k: StoredKey, lastMirrorEpoch: number | null): CoordinatorRecord {
  let value: Buffer | null = null;
  if (lastMirrorEpoch !== null) {
    const w = new Writer(16);
    w.int16(0);
    encodeLastMirrorEpochsValue(w, { lastMirrorEpoch }, 0);
    value = w.toBuffer();
  }
  return { key: encodeKey(RECORD_LAST_MIRROR_EPOCHS, k), value };
}

/** One shard: the replayed contents of one `__mirror_state` partition. */
export class MirrorStateShard implements CoordinatorShard {
  readonly snapshots = new SnapshotRegistry();
  readonly states = new SnapshotMap<string, { key: StoredKey; value: PersistedPartitionState }>(this.snapshots);
  readonly lastMirrorEpochs = new SnapshotMap<string, { key: StoredKey; epoch: number }>(this.snapshots);
  /** The newest leader epoch a fenced state write of each partition was accepted at. */
  readonly writerEpochs = new SnapshotMap<string, number>(this.snapshots);

  replay(record: ReplayedRecord): void {
    const r = new Reader(record.key);
    const type = r.int16();
    if (type === RECORD_MIRROR_PARTITION_STATE) {
      const key = decodeMirrorPartitionStateKey(r, 0);
      if (record.value === null) {
        this.states.delete(mapKey(key));
        this.writerEpochs.delete(mapKey(key));
        return;
      }
      const vr = new Reader(record.value);
      const version = vr.int16();
      const v = decodeMirrorPartitionStateValue(vr, version);
      if (v.leaderEpoch > (this.writerEpochs.get(mapKey(key)) ?? -1)) this.writerEpochs.set(mapKey(key), v.leaderEpoch);
      const state = isMirrorPartitionState(v.state) ? v.state : MirrorPartitionState.UNKNOWN;
      // The prototype schema's PreviousState default is 16, not a state: read it as UNKNOWN (decision D10).
      const previousState = isMirrorPartitionState(v.previousState) ? v.previousState : MirrorPartitionState.UNKNOWN;
      this.states.set(mapKey(key), { key, value: { state, previousState, retryAttempt: v.retryAttempt, errorMessage: v.errorMessage } });
    } else if (type === RECORD_LAST_MIRROR_EPOCHS) {
      const key = decodeLastMirrorEpochsKey(r, 0);
      if (record.value === null) {
        this.lastMirrorEpochs.delete(mapKey(key));
        return;
      }
      const vr = new Reader(record.value);
      const version = vr.int16();
      this.lastMirrorEpochs.set(mapKey(key), { key, epoch: decodeLastMirrorEpochsValue(vr, version).lastMirrorEpoch });
    }
    // Unknown record types are skipped: a newer node may have written them.
  }
}

/**
 * The last mirrored epoch a STOPPING records when the partition had mirrored nothing. Stored as
 * such (not as the -1 of "nothing recorded"): a later STOPPING then knows that the log's batches
 * are all this cluster's own, and does not take a client write's epoch for a mirrored one. It
 * never leaves the node: every answer to another cluster reads it as -1.
 */
export const NOTHING_MIRRORED = -2;

export interface MirrorPartitionRecord {
  readonly state: PersistedPartitionState | null;
  /** -1 when none was recorded, NOTHING_MIRRORED when a stop recorded that nothing was mirrored. */
  readonly lastMirrorEpoch: number;
}

function fenced(e: { topicId: string; partition: number; leaderEpoch: number }, current: number): KafkaError {
  return new KafkaError(ErrorCode.FENCED_LEADER_EPOCH, `the write of partition ${e.partition} of topic id ${e.topicId} carries leader epoch ${e.leaderEpoch}, older than the current ${current}`);
}

/** One write of a mirror partition's state and/or last mirrored epoch. */
export interface MirrorStateEntry {
  readonly topicId: string;
  readonly partition: number;
  readonly state?: PersistedPartitionState;
  readonly lastMirrorEpoch?: number;
  /** The writer's leader epoch of the mirror partition; -1 skips the fencing check. */
  readonly leaderEpoch: number;
}

export class MirrorCoordinator implements MirrorStateStore {
  readonly runtime: CoordinatorRuntime<MirrorStateShard>;

  /**
   * `leaderEpochOf` gives the leader epoch of a mirror partition in this node's metadata image
   * (undefined when unknown), against which fenced writes are checked.
   */
  constructor(
    host: CoordinatorHost,
    partitions = DEFAULT_MIRROR_STATE_PARTITIONS,
    private readonly leaderEpochOf: (topicId: string, partition: number) => number | undefined = () => undefined,
  ) {
    this.runtime = new CoordinatorRuntime<MirrorStateShard>({
      host,
      topic: MIRROR_STATE_TOPIC,
      partitions,
      newShard: () => new MirrorStateShard(),
    });
  }

  partitionFor(mirrorName: string, topicId: string, partition: number): number {
    return partitionForKey(mirrorStateKeyString(mirrorName, topicId, partition), this.runtime.partitions);
  }

  /** Partition owning mirror-level work (spec §2: hash(mirrorName) mod N). */
  partitionForMirror(mirrorName: string): number {
    return partitionForKey(mirrorName, this.runtime.partitions);
  }

  /** MirrorStateStore: persists one partition's state (the state machine's write-before-action). */
  async writeState(key: MirrorPartitionKey, value: PersistedPartitionState): Promise<void> {
    await this.write(key.mirrorName, [{ topicId: key.topicId, partition: key.partition, state: value }]);
  }

  /**
   * A partition leader's write (local or WriteMirrorStates): refused with FENCED_LEADER_EPOCH when
   * the image here knows a newer leader epoch of a partition than the writer did, so a leader that
   * was replaced (or whose epoch was bumped since) cannot overwrite its successor's state, as the
   * later KIP-1279 revision's WriteMirrorStates LeaderEpoch check does; and refused the same way
   * when a state write of the partition was already accepted at a newer epoch (the image here may
   * lag: a deposed leader's late write must not land over its successor's). That epoch is kept in
   * the state record (tagged LeaderEpoch), so a coordinator that loads the shard knows it. Applied
   * before any record of the shard is written: a refused write changes nothing there.
   */
  async writeFenced(mirrorName: string, entries: readonly MirrorStateEntry[]): Promise<void> {
    for (const e of entries) {
      const current = e.leaderEpoch >= 0 ? this.leaderEpochOf(e.topicId, e.partition) : undefined;
      if (current !== undefined && e.leaderEpoch < current) throw fenced(e, current);
    }
    await this.write(mirrorName, entries, true);
  }

  /**
   * Writes states and/or last mirrored epochs, grouped per `__mirror_state` partition; state
   * records first, then LME records (as the reference coordinator does). Resolves when committed.
   */
  async write(
    mirrorName: string,
    entries: readonly { topicId: string; partition: number; state?: PersistedPartitionState; lastMirrorEpoch?: number; leaderEpoch?: number }[],
    fencedWrite = false,
  ): Promise<void> {
    if (entries.length === 1) return this.writeOne(mirrorName, entries[0]!, fencedWrite);
    const byShard = new Map<number, CoordinatorRecord[]>();
    const lmes = new Map<number, CoordinatorRecord[]>();
    const checks = new Map<number, { key: string; entry: MirrorStateEntry }[]>();
    for (const e of entries) {
      const k = { mirrorName, topicId: e.topicId, partition: e.partition };
      const p = this.partitionFor(mirrorName, e.topicId, e.partition);
      const epoch = fencedWrite ? (e.leaderEpoch ?? -1) : -1;
      if (e.state !== undefined) push(byShard, p, stateRecord(k, e.state, epoch));
      if (e.lastMirrorEpoch !== undefined) push(lmes, p, lastMirrorEpochRecord(k, e.lastMirrorEpoch));
      if (epoch >= 0) push(checks, p, { key: mapKey(k), entry: { ...e, leaderEpoch: epoch } });
    }
    const shards = new Set([...byShard.keys(), ...lmes.keys()]);
    await Promise.all(
      [...shards].map((p) =>
        this.runtime.writeTo(p, (shard) => {
          // Checked again where writes are ordered: a write accepted at a newer epoch (while this
          // node's image had not seen that epoch yet) fences every later one at an older epoch.
          for (const { key, entry } of checks.get(p) ?? []) {
            const newest = shard.writerEpochs.get(key);
            if (newest !== undefined && entry.leaderEpoch < newest) throw fenced(entry, newest);
          }
          return { records: [...(byShard.get(p) ?? []), ...(lmes.get(p) ?? [])], response: undefined };
        }),
      ),
    );
  }

  /**
   * `write` of one partition's entry (each state transition, each last mirrored epoch), without
   * the grouping by shard: the same records in the same order, the same check where writes are
   * ordered.
   */
  private async writeOne(
    mirrorName: string,
    e: { topicId: string; partition: number; state?: PersistedPartitionState; lastMirrorEpoch?: number; leaderEpoch?: number },
    fencedWrite: boolean,
  ): Promise<void> {
    const k = { mirrorName, topicId: e.topicId, partition: e.partition };
    const epoch = fencedWrite ? (e.leaderEpoch ?? -1) : -1;
    const records: CoordinatorRecord[] = [];
    if (e.state !== undefined) records.push(stateRecord(k, e.state, epoch));
    if (e.lastMirrorEpoch !== undefined) records.push(lastMirrorEpochRecord(k, e.lastMirrorEpoch));
    if (records.length === 0) return;
    const key = epoch >= 0 ? mapKey(k) : null;
    await this.runtime.writeTo(this.partitionFor(mirrorName, e.topicId, e.partition), (shard) => {
      if (key !== null) {
        const newest = shard.writerEpochs.get(key);
        if (newest !== undefined && epoch < newest) throw fenced({ topicId: e.topicId, partition: e.partition, leaderEpoch: epoch }, newest);
      }
      return { records, response: undefined };
    });
  }

  async read(mirrorName: string, topicId: string, partition: number): Promise<MirrorPartitionRecord> {
    const p = this.partitionFor(mirrorName, topicId, partition);
    return this.runtime.readFrom(p, (shard) => {
      const k = mapKey({ mirrorName, topicId, partition });
      return { state: shard.states.get(k)?.value ?? null, lastMirrorEpoch: shard.lastMirrorEpochs.get(k)?.epoch ?? -1 };
    });
  }

  /** Every stored key of a mirror (all shards are loaded for this). */
  async entriesOf(mirrorName: string): Promise<{ topicId: string; partition: number; record: MirrorPartitionRecord }[]> {
    await this.runtime.loadAll();
    const out = new Map<string, { topicId: string; partition: number; record: { state: PersistedPartitionState | null; lastMirrorEpoch: number } }>();
    const shards = await this.runtime.readAll((shard) => ({ states: [...shard.states], lastMirrorEpochs: [...shard.lastMirrorEpochs] }));
    for (const shard of shards) {
      for (const [k, { key, value }] of shard.states) {
        if (key.mirrorName !== mirrorName) continue;
        out.set(k, { topicId: key.topicId, partition: key.partition, record: { state: value, lastMirrorEpoch: -1 } });
      }
      for (const [k, { key, epoch }] of shard.lastMirrorEpochs) {
        if (key.mirrorName !== mirrorName) continue;
        const cur = out.get(k);
        if (cur !== undefined) cur.record.lastMirrorEpoch = epoch;
        else out.set(k, { topicId: key.topicId, partition: key.partition, record: { state: null, lastMirrorEpoch: epoch } });
      }
    }
    return [...out.values()];
  }

  /** Tombstones every record of a deleted mirror (spec §3.2). */
  async tombstoneMirror(mirrorName: string): Promise<number> {
    const entries = await this.entriesOf(mirrorName);
    const byShard = new Map<number, CoordinatorRecord[]>();
    for (const e of entries) {
      const k = { mirrorName, topicId: e.topicId, partition: e.partition };
      const p = this.partitionFor(mirrorName, e.topicId, e.partition);
      push(byShard, p, stateRecord(k, null));
      push(byShard, p, lastMirrorEpochRecord(k, null));
    }
    await Promise.all([...byShard].map(([p, records]) => this.runtime.writeTo(p, () => ({ records, response: undefined }))));
    return entries.length;
  }

  async close(): Promise<void> {
    await this.runtime.close();
  }
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  let list = m.get(k);
  if (list === undefined) m.set(k, (list = []));
  list.push(v);
}

export type { MirrorPartitionStateValue };
