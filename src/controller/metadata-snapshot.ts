/**
 * A metadata snapshot: the records that rebuild the image as it is at one offset (Kafka's
 * metadata snapshots hold the image as records too: TopicRecord, PartitionRecord, ConfigRecord,
 * ..., see Kafka's MetadataImage.write). Replaying a snapshot, then the records after its offset,
 * gives the same image as replaying the whole log.
 *
 * Each entry carries the offset it is applied at: the snapshot's own offset, except the
 * MirrorTopicStateChangeRecord of a topic, which keeps the offset of the change it stands for
 * (the mirror control plane validates against it).
 */
import { ConfigResourceType } from '../protocol/config-resource-type.js';
import { type MetadataImage, type TopicImage } from './metadata-image.js';
import { decodeMetadataRecord, type MetadataRecord } from './metadata-records.js';

interface SnapshotEntry {
  readonly offset: number;
  readonly record: MetadataRecord;
}

/** The records of the image at its current offset. */
export function imageRecords(img: MetadataImage): SnapshotEntry[] {
  const at = img.offset;
  const out: SnapshotEntry[] = [];
  const add = (record: MetadataRecord, offset = at): void => void out.push({ offset, record });
  for (const t of img.topicsById.values()) {
    add({ type: 'topic', name: t.name, topicId: t.topicId });
    for (const p of t.partitions) {
      if (p === undefined) continue;
      add({
        type: 'partition',
        topicId: t.topicId,
        partition: p.partition,
        leader: p.leader,
        leaderEpoch: p.leaderEpoch,
        partitionEpoch: p.partitionEpoch,
        replicas: [...p.replicas],
        isr: [...p.isr],
        ...((p.addingReplicas?.length ?? 0) > 0 ? { addingReplicas: [...p.addingReplicas!] } : {}),
        ...((p.removingReplicas?.length ?? 0) > 0 ? { removingReplicas: [...p.removingReplicas!] } : {}),
      });
    }
    for (const [name, value] of t.configs) add({ type: 'config', resourceType: ConfigResourceType.TOPIC, resourceName: t.name, name, value });
    if (t.mirror) add({ type: 'mirrorTopicState', topicId: t.topicId, mirrorName: t.mirror.mirrorName, desiredState: t.mirror.desiredState }, t.mirror.lastStateChangeOffset);
  }
  for (const [resourceName, entries] of img.brokerConfigs) {
    for (const [name, value] of entries) add({ type: 'config', resourceType: ConfigResourceType.BROKER, resourceName, name, value });
  }
  for (const [resourceType, byName] of img.otherConfigs) {
    for (const [resourceName, entries] of byName) for (const [name, value] of entries) add({ type: 'config', resourceType, resourceName, name, value });
  }
  for (const acl of img.acls.values()) add({ type: 'acl', ...acl });
  for (const byMechanism of img.scram.values()) for (const cred of byMechanism.values()) add({ type: 'scram', ...cred });
  for (const q of img.quotas.values()) {
    for (const [key, value] of q.values) add({ type: 'quota', entity: q.entity.map((e) => ({ ...e })), key, value, remove: false });
  }
  if (img.nextProducerId > 0) add({ type: 'producerIds', brokerId: -1, nextProducerId: img.nextProducerId });
  return out;
}

/** What a stored log holds after a compaction: the snapshot (if any) and the records after it. */
interface SnapshotAndTail {
  readonly snapshot: { readonly offset: number; readonly entries: readonly { readonly offset: number; readonly value: Buffer }[] } | null;
  readonly records: readonly { readonly offset: number; readonly value: Buffer }[];
}

/**
 * Rebuilds `img` in place from a snapshot and the records after it (a watch that fell behind a
 * compaction). Returns what listeners are told: the snapshot's records (every topic, partition
 * and config as it now is), a RemoveTopicRecord for each topic that is gone, then the tail; and
 * the topics removed.
 */
export function rebuildImage(
  img: MetadataImage,
  log: SnapshotAndTail,
  apply: (rec: MetadataRecord, offset: number) => void,
): { records: MetadataRecord[]; removed: Map<string, TopicImage> } {
  const decoded = (xs: SnapshotAndTail['records']): { offset: number; rec: MetadataRecord }[] =>
    xs.flatMap((x) => {
      const rec = decodeMetadataRecord(x.value);
      return rec ? [{ offset: x.offset, rec }] : [];
    });
  const before = new Map([...img.topicsById].map(([id, t]): [string, TopicImage] => [id, { ...t, partitions: [...t.partitions] }]));
  const snap = log.snapshot ? decoded(log.snapshot.entries) : [];
  const tail = decoded(log.records);
  if (log.snapshot) {
    img.clear();
    for (const e of snap) apply(e.rec, e.offset);
    img.offset = log.snapshot.offset;
  }
  for (const e of tail) apply(e.rec, e.offset);
  img.offset = log.records[log.records.length - 1]?.offset ?? img.offset;
  const removed = new Map([...before].filter(([id]) => !img.topicsById.has(id)));
  const gone: MetadataRecord[] = [...removed.keys()].map((topicId) => ({ type: 'removeTopic', topicId }));
  return { records: [...snap.map((e) => e.rec), ...gone, ...tail.map((e) => e.rec)], removed };
}
