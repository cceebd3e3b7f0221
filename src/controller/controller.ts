/**
 * The embedded controller of a one-node cluster. Every metadata change is a list of Kafka
 * metadata records appended atomically (one record batch) to the metadata log and then applied to
 * the image; at start the log is replayed to rebuild the image.
 *
 * Concurrency contract: writes are serialized through one promise chain, so a write validates
 * against the image that results from every write before it (two CreateTopics for the same name
 * cannot both succeed). Readers use `image` directly; it only changes after an append commits.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ErrorCode } from '../protocol/generated/errors.js';
import type { Logger } from '../common/logger.js';
import { ConfigResourceType, MetadataImage, quotaEntityKey, type TopicImage } from './metadata-image.js';
import { decodeMetadataRecord, encodeMetadataRecord, type MetadataRecord } from './metadata-records.js';

/** Where the controller's records live (`<data>/__cluster_metadata-0/`). */
export interface MetadataLogStore {
  /** Appends the record values as one batch; resolves with the offset of the last one. */
  append(values: readonly Buffer[]): Promise<number>;
  /** Calls `cb` for every record in offset order. */
  replay(cb: (offset: number, value: Buffer) => void): Promise<void>;
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

const OK = (offset: number): ControllerResult => ({ errorCode: 0, errorMessage: null, metadataOffset: offset });
const FAIL = (errorCode: number, errorMessage: string): ControllerResult => ({ errorCode, errorMessage, metadataOffset: -1 });

/** Legal topic names (Kafka's `Topic.validate`). */
export function topicNameError(name: string): string | null {
  if (name.length === 0) return 'Topic name is illegal, it can\'t be empty';
  if (name === '.' || name === '..') return 'Topic name cannot be "." or ".."';
  if (name.length > 249) return `Topic name is illegal, it can't be longer than 249 characters, topic name: ${name}`;
  if (!/^[a-zA-Z0-9._-]+$/.test(name)) return `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`;
  return null;
}

/**
 * Kafka refuses a topic whose name equals an existing one once '.' is read as '_' (metric names
 * cannot tell them apart): `a.b` next to `a_b` (Topic.hasCollision).
 */
export function collidingTopic(img: MetadataImage, name: string): string | null {
  const norm = name.replace(/\./g, '_');
  for (const other of img.topicsByName.keys()) if (other !== name && other.replace(/\./g, '_') === norm) return other;
  return null;
}

/** A random topic id as Kafka makes them: a v4 UUID that is neither zero nor METADATA_TOPIC_ID. */
export function newTopicId(): string {
  return randomUUID();
}

/** Kafka's cluster id format: 16 random bytes, URL-safe base64 without padding (22 characters). */
export function newClusterId(): string {
  // Kafka's Uuid.randomUuid draws again when the text would start with '-', which its command-line
  // tools would read as an option.
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

export class Controller {
  readonly image = new MetadataImage();
  private chain: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<MetadataListener>();

  private constructor(
    readonly nodeId: number,
    readonly clusterId: string,
    private readonly store: MetadataLogStore,
    private readonly log: Logger,
  ) {}

  static async open(opts: { nodeId: number; clusterId: string; store: MetadataLogStore; log: Logger }): Promise<Controller> {
    const c = new Controller(opts.nodeId, opts.clusterId, opts.store, opts.log);
    let count = 0;
    await opts.store.replay((offset, value) => {
      const rec = decodeMetadataRecord(value);
      if (rec) c.apply(rec, offset);
      c.image.offset = offset;
      count++;
    });
    opts.log.info('metadata image loaded', { records: count, topics: c.image.topicsByName.size, offset: c.image.offset });
    return c;
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
        });
        break;
      case 'config':
        img.applyConfig(rec.resourceType, rec.resourceName, rec.name, rec.value);
        break;
      case 'partitionChange':
        img.applyPartitionChange(rec.topicId, rec.partition, { leaderEpoch: rec.leaderEpoch });
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

  /**
   * Validates against the current image (via `build`) and appends the resulting records as one
   * batch, then applies them. `build` returns records, or a failure result.
   */
  write(build: (image: MetadataImage) => MetadataRecord[] | ControllerResult): Promise<ControllerResult> {
    const run = async (): Promise<ControllerResult> => {
      const out = build(this.image);
      if (!Array.isArray(out)) return out;
      if (out.length === 0) return OK(this.image.offset);
      const values = out.map(encodeMetadataRecord);
      const last = await this.store.append(values);
      const first = last - out.length + 1;
      const removed = new Map<string, TopicImage>();
      for (const rec of out) {
        if (rec.type !== 'removeTopic') continue;
        const t = this.image.topicsById.get(rec.topicId);
        if (t) removed.set(rec.topicId, { ...t, partitions: [...t.partitions] });
      }
      out.forEach((rec, i) => this.apply(rec, first + i));
      this.image.offset = last;
      for (const l of this.listeners) {
        try {
          l(out, removed);
        } catch (err) {
          this.log.error('metadata listener failed', { err: err instanceof Error ? err : String(err) });
        }
      }
      return OK(last);
    };
    const p = this.chain.then(run, run);
    this.chain = p.catch(() => undefined);
    return p;
  }

  /** Records that create a topic (TopicRecord, PartitionRecords with epoch 0, ConfigRecords). */
  topicRecords(name: string, topicId: string, numPartitions: number, configs: ReadonlyMap<string, string>): MetadataRecord[] {
    const recs: MetadataRecord[] = [{ type: 'topic', name, topicId }];
    for (let p = 0; p < numPartitions; p++) {
      recs.push({ type: 'partition', topicId, partition: p, leader: this.nodeId, leaderEpoch: 0, partitionEpoch: 0, replicas: [this.nodeId], isr: [this.nodeId] });
    }
    for (const [k, v] of configs) recs.push({ type: 'config', resourceType: ConfigResourceType.TOPIC, resourceName: name, name: k, value: v });
    return recs;
  }

  createTopic(name: string, numPartitions: number, configs: ReadonlyMap<string, string>, topicId?: string): Promise<ControllerResult> {
    return this.write((img) => {
      const err = topicNameError(name);
      if (err) return FAIL(ErrorCode.INVALID_TOPIC_EXCEPTION, err);
      if (img.topicsByName.has(name)) return FAIL(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${name}' already exists.`);
      const collision = collidingTopic(img, name);
      if (collision) return FAIL(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${name}' collides with existing topic: ${collision}`);
      if (topicId !== undefined && img.topicsById.has(topicId)) return FAIL(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic id ${topicId} already exists.`);
      if (numPartitions < 1) return FAIL(ErrorCode.INVALID_PARTITIONS, 'Number of partitions must be larger than 0.');
      return this.topicRecords(name, topicId ?? newTopicId(), numPartitions, configs);
    });
  }

  deleteTopic(topicId: string): Promise<ControllerResult> {
    return this.write((img) => {
      if (!img.topicsById.has(topicId)) return FAIL(ErrorCode.UNKNOWN_TOPIC_ID, 'This server does not host this topic ID.');
      return [{ type: 'removeTopic', topicId }];
    });
  }

  createPartitions(name: string, newTotal: number): Promise<ControllerResult> {
    return this.write((img) => {
      const t = img.topicsByName.get(name);
      if (!t) return FAIL(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${name}' does not exist.`);
      const current = t.partitions.length;
      if (newTotal < current) return FAIL(ErrorCode.INVALID_PARTITIONS, `The topic ${name} currently has ${current} partition(s); ${newTotal} would not be an increase.`);
      if (newTotal === current) return FAIL(ErrorCode.INVALID_PARTITIONS, `Topic already has ${current} partition(s).`);
      const recs: MetadataRecord[] = [];
      for (let p = current; p < newTotal; p++) {
        recs.push({ type: 'partition', topicId: t.topicId, partition: p, leader: this.nodeId, leaderEpoch: 0, partitionEpoch: 0, replicas: [this.nodeId], isr: [this.nodeId] });
      }
      return recs;
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
