import { Reader } from '../protocol/reader.js';
import { Writer } from '../protocol/writer.js';
import type { CoordinatorRecord } from './coordinator-batch.js';
import { encodeOffsetCommitKey, decodeOffsetCommitKey } from '../protocol/generated/messages/offset-commit-key.js';
import { encodeOffsetCommitValue, decodeOffsetCommitValue as decodeOffsetCommitValueRecord } from '../protocol/generated/messages/offset-commit-value.js';
import { encodeGroupMetadataKey, decodeGroupMetadataKey } from '../protocol/generated/messages/group-metadata-key.js';
import { encodeGroupMetadataValue, decodeGroupMetadataValue as decodeGroupMetadataValueRecord } from '../protocol/generated/messages/group-metadata-value.js';

/**
 * __consumer_offsets record keys and values. A key starts with an int16 record type (Kafka's
 * `apiKey` of the coordinator-key schemas: 0/1 offset commit, 2 group metadata, 3.. KIP-848
 * records), a value with an int16 schema version; the structs use the generated codecs of the
 * coordinator record schemas. Classic records are written in the versions Kafka 3.x+ writes
 * (OffsetCommitValue v3, GroupMetadataValue v3) and read in every version.
 */
const RecordType = {
  OFFSET_COMMIT_LEGACY: 0,
  OFFSET_COMMIT: 1,
  GROUP_METADATA: 2,
  CONSUMER_GROUP_METADATA: 3,
  CONSUMER_GROUP_MEMBER_METADATA: 5,
  CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: 8,
} as const;

export interface OffsetCommitKey {
  readonly group: string;
  readonly topic: string;
  readonly partition: number;
}

export interface OffsetCommitValue {
  /** A bigint: a committed offset is any int64 (Long.MAX_VALUE included), past what a number holds exactly. */
  readonly offset: bigint;
  readonly leaderEpoch: number;
  readonly metadata: string;
  readonly commitTimestamp: number;
  readonly expireTimestamp: number;
}

export interface GroupMemberMetadata {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly rebalanceTimeout: number;
  readonly sessionTimeout: number;
  readonly subscription: Buffer;
  readonly assignment: Buffer;
}

export interface GroupMetadataValue {
  readonly protocolType: string;
  readonly generation: number;
  readonly protocol: string | null;
  readonly leader: string | null;
  readonly currentStateTimestamp: number;
  readonly members: readonly GroupMemberMetadata[];
}

type GroupRecordKey =
  | { readonly type: 'offset'; readonly key: OffsetCommitKey }
  | { readonly type: 'group'; readonly group: string }
  | { readonly type: 'other'; readonly recordType: number };

/** A record key: the int16 record type, then the key struct (version 0). */
function keyOf(type: number, encode: (w: Writer) => void): Buffer {
  const w = new Writer(64).int16(type);
  encode(w);
  return w.toBuffer();
}

/** A record value: the int16 schema version, then the value struct in that version. */
function valueOf(version: number, encode: (w: Writer) => void): Buffer {
  const w = new Writer(256).int16(version);
  encode(w);
  return w.toBuffer();
}

/**
 * A consumer, share or streams group record (KIP-848, KIP-932, KIP-1071): the key of `type`, the
 * value in version 0, or a tombstone when `value` is null.
 */
export function groupRecord(type: number, key: (w: Writer) => void, value: ((w: Writer) => void) | null): CoordinatorRecord {
  const k = keyOf(type, key);
  if (value === null) return { key: k, value: null };
  return { key: k, value: valueOf(0, value) };
}

/** What replaying one record reads: its key struct (past the record type), its value struct (null: tombstone) and the value's version. */
interface OpenedRecord {
  readonly key: Reader;
  readonly value: Reader | null;
  readonly version: number;
}

export function openRecord(key: Buffer, value: Buffer | null): OpenedRecord {
  const vr = value === null ? null : new Reader(value);
  return { key: new Reader(key, 2), value: vr, version: vr === null ? 0 : vr.int16() };
}

/** topic id → partitions, as consumer and share group assignments hold them. */
export type TopicAssignment = Map<string, number[]>;

export const topicAssignmentToWire = (a: TopicAssignment): { topicId: string; partitions: number[] }[] => [...a].map(([topicId, partitions]) => ({ topicId, partitions }));
export const topicAssignmentFromWire = (l: readonly { topicId: string; partitions: readonly number[] }[]): TopicAssignment => new Map(l.map((t) => [t.topicId, [...t.partitions]]));

/** The entry of `id` in `map`, added by `make` when there is none (replay creates groups and members on first sight). */
export function entryOf<V>(map: Map<string, V>, id: string, make: (id: string) => V): V {
  let v = map.get(id);
  if (v === undefined) map.set(id, (v = make(id)));
  return v;
}

export function offsetCommitRecord(key: OffsetCommitKey, value: OffsetCommitValue | null): CoordinatorRecord {
  const k = keyOf(RecordType.OFFSET_COMMIT, (w) => encodeOffsetCommitKey(w, key, 0));
  if (value === null) return { key: k, value: null };
  const v = valueOf(3, (w) =>
    encodeOffsetCommitValue(w, { offset: value.offset, leaderEpoch: value.leaderEpoch, metadata: value.metadata, commitTimestamp: BigInt(value.commitTimestamp) }, 3),
  );
  return { key: k, value: v };
}

export function groupMetadataRecord(group: string, value: GroupMetadataValue | null): CoordinatorRecord {
  const k = keyOf(RecordType.GROUP_METADATA, (w) => encodeGroupMetadataKey(w, { group }, 0));
  if (value === null) return { key: k, value: null };
  return { key: k, value: valueOf(3, (w) => encodeGroupMetadataValue(w, { ...value, currentStateTimestamp: BigInt(value.currentStateTimestamp) }, 3)) };
}

export function decodeGroupRecordKey(buf: Buffer): GroupRecordKey {
  const r = new Reader(buf);
  const type = r.int16();
  if (type === RecordType.OFFSET_COMMIT_LEGACY || type === RecordType.OFFSET_COMMIT) return { type: 'offset', key: decodeOffsetCommitKey(r, 0) };
  if (type === RecordType.GROUP_METADATA) return { type: 'group', group: decodeGroupMetadataKey(r, 0).group };
  return { type: 'other', recordType: type };
}

export function decodeOffsetCommitValue(buf: Buffer): OffsetCommitValue {
  const r = new Reader(buf);
  const v = decodeOffsetCommitValueRecord(r, r.int16());
  return { offset: v.offset, leaderEpoch: v.leaderEpoch, metadata: v.metadata, commitTimestamp: Number(v.commitTimestamp), expireTimestamp: Number(v.expireTimestamp) };
}

export function decodeGroupMetadataValue(buf: Buffer): GroupMetadataValue {
  const r = new Reader(buf);
  const v = decodeGroupMetadataValueRecord(r, r.int16());
  return {
    ...v,
    currentStateTimestamp: Number(v.currentStateTimestamp),
    members: v.members.map((m) => ({ ...m, subscription: Buffer.from(m.subscription), assignment: Buffer.from(m.assignment) })),
  };
}

/** Topics of a ConsumerProtocolSubscription (the bytes classic consumers put in JoinGroup). */
export function subscribedTopics(subscription: Buffer): string[] {
  try {
    const r = new Reader(subscription);
    r.int16();
    const n = r.arrayLength(2);
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(r.string());
    return out;
  } catch {
    return [];
  }
}
