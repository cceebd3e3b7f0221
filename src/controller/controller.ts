/**
 * The controller: every metadata change is a list of Kafka metadata records appended atomically
 * (one record batch) to the metadata log and then applied to the image; at start the log is
 * replayed to rebuild the image.
 *
 * Two stores: the embedded file log of a node alone, where this node is the only writer, and the
 * etcd log of a cluster (src/controller/etcd/), which any node may append to. There a write is
 * validated against the image at the log's last offset and committed only if that offset is still
 * the last (compare-and-swap); on a conflict the node waits for the watch to bring it up to date
 * and validates again. Every record, this node's own included, is applied when the watch delivers
 * it, so `onChange` listeners see the same batches in the same order on every node.
 *
 * Concurrency contract: writes are serialized through one promise chain, so a write validates
 * against the image that results from every write before it (two CreateTopics for the same name
 * cannot both succeed). Readers use `image` directly; it only changes after an append commits.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import type { Logger } from '../common/logger.js';
import { ConfigResourceType } from '../protocol/config-resource-type.js';
import { MetadataImage, quotaEntityKey, type TopicImage } from './metadata-image.js';
import { decodeMetadataRecord, encodeMetadataRecord, type MetadataRecord } from './metadata-records.js';
import { LocalClusterView, type ClusterView } from './cluster-view.js';
import type { ReloadedLog, ReplicatedMetadataLogStore, StoredSnapshot } from './etcd/etcd-metadata-log.js';
import { imageRecords, rebuildImage } from './metadata-snapshot.js';
import { checkAssignment, placeReplicas } from './replica-placement.js';
import { collidingTopic, newTopicId, topicNameError } from './topic-names.js';
import { MAX_RECORDS_PER_USER_OP } from './user-operation-limit.js';

export { collidingTopic, newClusterId, newTopicId, topicNameError } from './topic-names.js';

/** Where the controller's records live (`<data>/__cluster_metadata-0/`). */
export interface MetadataLogStore {
  /** Appends the record values as one batch; resolves with the offset of the last one. */
  append(values: readonly Buffer[]): Promise<number>;
  /** Calls `cb` for every record in offset order (a store with snapshots gives the snapshot first). */
  replay(cb: (offset: number, value: Buffer) => void, onSnapshot?: (snapshot: StoredSnapshot) => void): Promise<void>;
  close(): Promise<void>;
}

/** Called after records are applied; `removed` holds the topics RemoveTopicRecords took away. */
export type MetadataListener = (records: readonly MetadataRecord[], removed: ReadonlyMap<string, TopicImage>) => void;

export interface ControllerResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  /** Offset of the last record written (image offset after applying); -1 when nothing was written. */
  readonly metadataOffset: number;
}

export const OK = (offset: number): ControllerResult => ({ errorCode: 0, errorMessage: null, metadataOffset: offset });
export const FAIL = (errorCode: number, errorMessage: string): ControllerResult => ({ errorCode, errorMessage, metadataOffset: -1 });

/** How long a write waits for the watch to deliver a record it knows is committed. */
const CATCH_UP_TIMEOUT_MS = 30_000;
/** CAS conflicts tolerated before a write gives up (each one means another node wrote first). */
const MAX_WRITE_ATTEMPTS = 50;

interface ControllerOptions {
  readonly nodeId: number;
  readonly clusterId: string;
  readonly store: MetadataLogStore | ReplicatedMetadataLogStore;
  readonly log: Logger;
  /** The cluster's members; a node alone when absent. */
  readonly cluster?: ClusterView;
  /** The replication factor a topic gets when none is asked for (internal topics have their own keys). */
  readonly defaultReplicationFactor?: (topic: string) => number;
}

interface WriteOptions {
  /** Only the active controller may make this write (leader and ISR changes it decides). */
  readonly asController?: boolean;
}

/** Replicas of new partitions: a replication factor, or an explicit assignment (one list per partition). */
interface ReplicaSpec {
  readonly replicationFactor?: number;
  readonly assignment?: readonly (readonly number[])[];
}

export class Controller {
  readonly image = new MetadataImage();
  readonly cluster: ClusterView;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<MetadataListener>();
  private waiters: { offset: number; resolve: () => void }[] = [];
  /** Bytes of metadata records applied from the shared log since start (snapshot scheduling). */
  recordBytes = 0;

  private constructor(
    readonly nodeId: number,
    readonly clusterId: string,
    private readonly store: MetadataLogStore | ReplicatedMetadataLogStore,
    private readonly log: Logger,
    cluster: ClusterView | undefined,
    private readonly defaultRf: (topic: string) => number,
  ) {
    this.cluster = cluster ?? new LocalClusterView({ nodeId, host: '', port: 0, endpoints: [], rack: null, incarnationId: '' });
  }

  static async open(opts: ControllerOptions): Promise<Controller> {
    const c = new Controller(opts.nodeId, opts.clusterId, opts.store, opts.log, opts.cluster, opts.defaultReplicationFactor ?? (() => 1));
    let count = 0;
    const one = (offset: number, value: Buffer): void => {
      const rec = decodeMetadataRecord(value);
      if (rec) c.apply(rec, offset);
      count++;
    };
    await opts.store.replay(
      (offset, value) => {
        one(offset, value);
        c.image.offset = offset;
      },
      (snap) => {
        for (const e of snap.entries) one(e.offset, e.value);
        c.image.offset = snap.offset;
      },
    );
    opts.log.info('metadata image loaded', { records: count, topics: c.image.topicsByName.size, offset: c.image.offset });
    if ('replicated' in opts.store) {
      await opts.store.follow(
        (first, values) => {
          c.recordBytes += values.reduce((n, v) => n + v.length, 0);
          const recs = values.map(decodeMetadataRecord).filter((r): r is MetadataRecord => r !== null);
          c.applyBatch(recs, first, first + values.length - 1);
        },
        (reloaded) => c.reload(reloaded),
      );
    }
    return c;
  }

  /**
   * The watch fell behind a compaction: the image is rebuilt from the snapshot and the records
   * after it, and listeners are told with the snapshot's records (every topic, partition and
   * config as it now is), a RemoveTopicRecord for each topic that is gone, and the tail.
   */
  private reload(log: ReloadedLog): void {
    const { records, removed } = rebuildImage(this.image, log, (rec, offset) => this.apply(rec, offset));
    this.log.info('metadata image reloaded from a snapshot', { snapshotOffset: log.snapshot?.offset ?? -1, offset: this.image.offset, topics: this.image.topicsByName.size });
    this.notify(records, removed, this.image.offset);
  }

  /**
   * Writes a snapshot of the image at its current offset (only with the etcd log); false when
   * there is nothing new since the latest one.
   */
  async snapshot(): Promise<boolean> {
    const store = this.store;
    if (!('replicated' in store) || this.image.offset <= store.snapshotOffset) return false;
    const entries = imageRecords(this.image).map((e) => ({ offset: e.offset, value: encodeMetadataRecord(e.record) }));
    return store.writeSnapshot({ offset: this.image.offset, entries });
  }

  /** true when the metadata log is shared by several nodes (etcd). */
  get distributed(): boolean {
    return 'replicated' in this.store;
  }

  /** Subscribes to applied changes; returns an unsubscribe. */
  onChange(cb: MetadataListener): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  private apply(rec: MetadataRecord, offset: number): void {
    const img = this.image;
    switch (rec.type) {
      case 'topic':
        img.applyTopic(rec.name, rec.topicId);
        break;
      case 'partition':
        img.applyPartition(rec.topicId, {
          partition: rec.partition,
          leader: rec.leader,
          leaderEpoch: rec.leaderEpoch,
          partitionEpoch: rec.partitionEpoch,
          replicas: [...rec.replicas],
          isr: [...rec.isr],
          ...(rec.addingReplicas ? { addingReplicas: [...rec.addingReplicas] } : {}),
          ...(rec.removingReplicas ? { removingReplicas: [...rec.removingReplicas] } : {}),
        });
        break;
      case 'config':
        img.applyConfig(rec.resourceType, rec.resourceName, rec.name, rec.value);
        break;
      case 'partitionChange':
        img.applyPartitionChange(rec.topicId, rec.partition, {
          leaderEpoch: rec.leaderEpoch,
          ...(rec.leader !== undefined ? { leader: rec.leader } : {}),
          ...(rec.isr ? { isr: [...rec.isr] } : {}),
          ...(rec.replicas ? { replicas: [...rec.replicas] } : {}),
          ...(rec.addingReplicas ? { addingReplicas: [...rec.addingReplicas] } : {}),
          ...(rec.removingReplicas ? { removingReplicas: [...rec.removingReplicas] } : {}),
        });
        break;
      case 'removeTopic': {
        const t = img.topicsById.get(rec.topicId);
        img.applyRemoveTopic(rec.topicId);
        // Topic configs go with the topic (Kafka's ConfigurationControlManager.deleteTopicConfigs).
        if (t) t.configs.clear();
        break;
      }
      case 'acl': {
        const { type: _t, ...entry } = rec;
        img.acls.set(rec.id, entry);
        break;
      }
      case 'removeAcl':
        img.acls.delete(rec.id);
        break;
      case 'scram': {
        const { type: _t, ...cred } = rec;
        let m = img.scram.get(rec.name);
        if (!m) img.scram.set(rec.name, (m = new Map()));
        m.set(rec.mechanism, cred);
        break;
      }
      case 'removeScram': {
        const m = img.scram.get(rec.name);
        m?.delete(rec.mechanism);
        if (m && m.size === 0) img.scram.delete(rec.name);
        break;
      }
      case 'quota': {
        const k = quotaEntityKey(rec.entity);
        let q = img.quotas.get(k);
        if (!q) img.quotas.set(k, (q = { entity: rec.entity.map((e) => ({ ...e })), values: new Map() }));
        if (rec.remove) q.values.delete(rec.key);
        else q.values.set(rec.key, rec.value);
        if (q.values.size === 0) img.quotas.delete(k);
        break;
      }
      case 'producerIds':
        img.nextProducerId = Math.max(img.nextProducerId, rec.nextProducerId);
        break;
      case 'mirrorTopicState':
        img.applyMirrorTopicState(rec.topicId, rec.mirrorName, rec.desiredState, offset);
        break;
    }
  }

  /** Applies one committed batch and tells the listeners (the same path for every store). */
  private applyBatch(out: readonly MetadataRecord[], first: number, last: number): void {
    const removed = new Map<string, TopicImage>();
    for (const rec of out) {
      if (rec.type !== 'removeTopic') continue;
      const t = this.image.topicsById.get(rec.topicId);
      if (t) removed.set(rec.topicId, { ...t, partitions: [...t.partitions] });
    }
    out.forEach((rec, i) => this.apply(rec, first + i));
    this.image.offset = last;
    this.notify(out, removed, last);
  }

  private notify(out: readonly MetadataRecord[], removed: ReadonlyMap<string, TopicImage>, last: number): void {
    for (const l of this.listeners) {
      try {
        l(out, removed);
      } catch (err) {
        this.log.error('metadata listener failed', { err: err instanceof Error ? err : String(err) });
      }
    }
    const due = this.waiters.filter((w) => w.offset <= last);
    this.waiters = this.waiters.filter((w) => w.offset > last);
    for (const w of due) w.resolve();
  }

  /** Resolves true once the image has applied `offset`, false after the timeout. */
  caughtUpTo(offset: number, timeoutMs = CATCH_UP_TIMEOUT_MS): Promise<boolean> {
    if (this.image.offset >= offset) return Promise.resolve(true);
    return new Promise((res) => {
      const w = { offset, resolve: () => (clearTimeout(timer), res(true)) };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        res(false);
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  /**
   * Validates against the current image (via `build`) and appends the resulting records as one
   * batch, then applies them. `build` returns records, or a failure result. With a shared log,
   * `build` runs again after every conflict, against the image at the new last offset.
   */
  write(build: (image: MetadataImage) => MetadataRecord[] | ControllerResult, opts: WriteOptions = {}): Promise<ControllerResult> {
    const run = async (): Promise<ControllerResult> => {
      const store = this.store;
      if (!('replicated' in store)) {
        const out = build(this.image);
        if (!Array.isArray(out)) return out;
        if (out.length === 0) return OK(this.image.offset);
        const last = await store.append(out.map(encodeMetadataRecord));
        this.applyBatch(out, last - out.length + 1, last);
        return OK(last);
      }
      for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
        const out = build(this.image);
        if (!Array.isArray(out)) return out;
        if (out.length === 0) return OK(this.image.offset);
        let r;
        try {
          r = await store.appendIf(out.map(encodeMetadataRecord), this.image.offset, opts.asController === true);
        } catch (err) {
          // etcd refuses a transaction of more operations than its --max-txn-ops (128 unless
          // set): the write cannot succeed by retrying, so it is refused as too large.
          if (String(err).includes('too many operations in txn request')) {
            return FAIL(ErrorCode.POLICY_VIOLATION, `A metadata write of ${out.length} records is more than etcd takes in one transaction; run etcd with --max-txn-ops ${MAX_RECORDS_PER_USER_OP + 1} or more.`);
          }
          return FAIL(ErrorCode.REQUEST_TIMED_OUT, `The metadata quorum could not be reached: ${String(err)}`);
        }
        if (r.kind === 'notController') return FAIL(ErrorCode.NOT_CONTROLLER, 'This node is not the active controller.');
        const target = r.kind === 'ok' ? r.lastOffset : r.headOffset;
        if (!(await this.caughtUpTo(target))) return FAIL(ErrorCode.REQUEST_TIMED_OUT, `The metadata log did not reach offset ${target} in time.`);
        if (r.kind === 'ok') return OK(r.lastOffset);
      }
      return FAIL(ErrorCode.REQUEST_TIMED_OUT, 'Too many concurrent metadata writes; try again.');
    };
    const p = this.chain.then(run, run);
    this.chain = p.catch(() => undefined);
    return p;
  }

  /**
   * Replica lists for new partitions: the explicit assignment (checked against live brokers), or
   * placed across live brokers (replica-placement.ts). A failure result when neither works.
   */
  placement(topic: string, firstPartition: number, numPartitions: number, spec: ReplicaSpec = {}): number[][] | ControllerResult {
    if (spec.assignment) {
      const err = checkAssignment(spec.assignment, (id) => this.cluster.isLive(id));
      if (err) return FAIL(err.errorCode, err.errorMessage);
      return spec.assignment.map((a) => [...a]);
    }
    const rf = spec.replicationFactor ?? this.defaultRf(topic);
    const placed = placeReplicas(firstPartition, numPartitions, rf, this.cluster.liveBrokers());
    return Array.isArray(placed) ? placed : FAIL(placed.errorCode, placed.errorMessage);
  }

  /**
   * Records that create a topic (TopicRecord, PartitionRecords with epoch 0, ConfigRecords): the
   * first replica of each partition leads, every replica is in the ISR. Throws when the replicas
   * cannot be placed (callers that answer a client check `placement` first).
   */
  topicRecords(name: string, topicId: string, numPartitions: number, configs: ReadonlyMap<string, string>, spec: ReplicaSpec = {}): MetadataRecord[] {
    const placed = this.placement(name, 0, numPartitions, spec);
    if (!Array.isArray(placed)) throw new Error(placed.errorMessage ?? 'replica placement failed');
    const recs: MetadataRecord[] = [{ type: 'topic', name, topicId }];
    placed.forEach((replicas, p) => recs.push({ type: 'partition', topicId, partition: p, leader: replicas[0]!, leaderEpoch: 0, partitionEpoch: 0, replicas, isr: [...replicas] }));
    for (const [k, v] of configs) recs.push({ type: 'config', resourceType: ConfigResourceType.TOPIC, resourceName: name, name: k, value: v });
    return recs;
  }

  createTopic(name: string, numPartitions: number, configs: ReadonlyMap<string, string>, topicId?: string, spec: ReplicaSpec = {}): Promise<ControllerResult> {
    return this.write((img) => {
      const err = topicNameError(name);
      if (err) return FAIL(ErrorCode.INVALID_TOPIC_EXCEPTION, err);
      if (img.topicsByName.has(name)) return FAIL(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${name}' already exists.`);
      const collision = collidingTopic(img, name);
      if (collision) return FAIL(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${name}' collides with existing topic: ${collision}`);
      if (topicId !== undefined && img.topicsById.has(topicId)) return FAIL(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic id ${topicId} already exists.`);
      if (numPartitions < 1) return FAIL(ErrorCode.INVALID_PARTITIONS, 'Number of partitions must be larger than 0.');
      const placed = this.placement(name, 0, numPartitions, spec);
      if (!Array.isArray(placed)) return placed;
      return this.topicRecords(name, topicId ?? newTopicId(), numPartitions, configs, { assignment: placed });
    });
  }

  deleteTopic(topicId: string): Promise<ControllerResult> {
    return this.write((img) => {
      if (!img.topicsById.has(topicId)) return FAIL(ErrorCode.UNKNOWN_TOPIC_ID, 'This server does not host this topic ID.');
      return [{ type: 'removeTopic', topicId }];
    });
  }

  /** New partitions take the topic's replication factor (that of partition 0) unless assigned. */
  createPartitions(name: string, newTotal: number, assignment?: readonly (readonly number[])[]): Promise<ControllerResult> {
    return this.write((img) => {
      const t = img.topicsByName.get(name);
      if (!t) return FAIL(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${name}' does not exist.`);
      const current = t.partitions.length;
      if (newTotal < current) return FAIL(ErrorCode.INVALID_PARTITIONS, `The topic ${name} currently has ${current} partition(s); ${newTotal} would not be an increase.`);
      if (newTotal === current) return FAIL(ErrorCode.INVALID_PARTITIONS, `Topic already has ${current} partition(s).`);
      if (assignment && assignment.length !== newTotal - current) {
        return FAIL(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Attempted to add ${newTotal - current} additional partition(s), but only ${assignment.length} assignment(s) were specified.`);
      }
      const rf = t.partitions[0]?.replicas.length ?? 1;
      const placed = this.placement(name, current, newTotal - current, assignment ? { assignment } : { replicationFactor: rf });
      if (!Array.isArray(placed)) return placed;
      return placed.map((replicas, i) => ({ type: 'partition' as const, topicId: t.topicId, partition: current + i, leader: replicas[0]!, leaderEpoch: 0, partitionEpoch: 0, replicas, isr: [...replicas] }));
    });
  }

  /** Sets (value) or deletes (null) config keys of one resource in one atomic write. */
  alterConfigs(resourceType: number, resourceName: string, changes: ReadonlyArray<readonly [string, string | null]>): Promise<ControllerResult> {
    return this.write(() => changes.map(([name, value]) => ({ type: 'config' as const, resourceType, resourceName, name, value })));
  }

  bumpLeaderEpoch(topicId: string, partition: number, leaderEpoch: number): Promise<ControllerResult> {
    return this.write((img) => {
      const p = img.topicsById.get(topicId)?.partitions[partition];
      if (!p) return FAIL(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'Unknown partition');
      if (leaderEpoch <= p.leaderEpoch) return [];
      return [{ type: 'partitionChange', topicId, partition, leaderEpoch }];
    });
  }

  /**
   * Hands out a block of producer ids, persisted before use so ids are never reused after a
   * restart (Kafka's ProducerIdControlManager, blocks of 1000).
   */
  allocateProducerIdBlock(size = 1000): Promise<{ first: number; last: number }> {
    let first = 0;
    return this.write((img) => {
      first = img.nextProducerId;
      return [{ type: 'producerIds', brokerId: this.nodeId, nextProducerId: first + size }];
    }).then((r) => {
      if (r.errorCode !== 0) throw new Error(`producer id allocation failed: ${r.errorMessage ?? r.errorCode}`);
      return { first, last: first + size - 1 };
    });
  }

  topic(name: string): TopicImage | undefined {
    return this.image.topicsByName.get(name);
  }

  close(): Promise<void> {
    return this.chain.then(() => this.store.close());
  }
}
