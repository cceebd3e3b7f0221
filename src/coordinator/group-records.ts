import { Reader } from '../protocol/reader.js';
import { Writer } from '../protocol/writer.js';
import type { CoordinatorRecord } from './coordinator-batch.js';

/**
 * __consumer_offsets record keys and values. A key starts with an int16 record type (Kafka's
 * `apiKey` of the coordinator-key schemas: 0/1 offset commit, 2 group metadata, 3.. KIP-848
 * records), a value with an int16 schema version. Classic records are written in the versions
 * Kafka 3.x+ writes (OffsetCommitValue v3, GroupMetadataValue v3) and read in every version, so a
 * log written by Kafka replays here too.
 */
export const RecordType = {
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
  readonly offset: number;
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

export type GroupRecordKey =
  | { readonly type: 'offset'; readonly key: OffsetCommitKey }
  | { readonly type: 'group'; readonly group: string }
  | { readonly type: 'other'; readonly recordType: number };

export function offsetCommitRecord(key: OffsetCommitKey, value: OffsetCommitValue | null): CoordinatorRecord {
  const k = new Writer(64).int16(RecordType.OFFSET_COMMIT).string(key.group).string(key.topic).int32(key.partition);
  if (value === null) return { key: k.toBuffer(), value: null };
  const v = new Writer(64);
  v.int16(3).int64(BigInt(value.offset)).int32(value.leaderEpoch).string(value.metadata).int64(BigInt(value.commitTimestamp));
  return { key: k.toBuffer(), value: v.toBuffer() };
}

export function groupMetadataRecord(group: string, value: GroupMetadataValue | null): CoordinatorRecord {
  const k = new Writer(64).int16(RecordType.GROUP_METADATA).string(group).toBuffer();
  if (value === null) return { key: k, value: null };
  const w = new Writer(256);
  w.int16(3).string(value.protocolType).int32(value.generation).nullableString(value.protocol).nullableString(value.leader);
  w.int64(BigInt(value.currentStateTimestamp));
  w.int32(value.members.length);
  for (const m of value.members) {
    w.string(m.memberId).nullableString(m.groupInstanceId).string(m.clientId).string(m.clientHost);
    w.int32(m.rebalanceTimeout).int32(m.sessionTimeout).bytes(m.subscription).bytes(m.assignment);
  }
  return { key: k, value: w.toBuffer() };
}

export function decodeGroupRecordKey(buf: Buffer): GroupRecordKey {
  const r = new Reader(buf);
  const type = r.int16();
  if (type === RecordType.OFFSET_COMMIT_LEGACY || type === RecordType.OFFSET_COMMIT) {
    return { type: 'offset', key: { group: r.string(), topic: r.string(), partition: r.int32() } };
  }
  if (type === RecordType.GROUP_METADATA) return { type: 'group', group: r.string() };
  return { type: 'other', recordType: type };
}

/** Reads an int64 that must fit a JS number (offsets, timestamps). */
function num(r: Reader): number {
  return Number(r.int64());
}

export function decodeOffsetCommitValue(buf: Buffer): OffsetCommitValue {
  const r = new Reader(buf);
  const version = r.int16();
  const flexible = version >= 4;
  const offset = num(r);
  const leaderEpoch = version >= 3 ? r.int32() : -1;
  const metadata = flexible ? r.compactString() : r.string();
  const commitTimestamp = num(r);
  const expireTimestamp = version === 1 ? num(r) : -1;
  return { offset, leaderEpoch, metadata, commitTimestamp, expireTimestamp };
}

export function decodeGroupMetadataValue(buf: Buffer): GroupMetadataValue {
  const r = new Reader(buf);
  const version = r.int16();
  const flex = version >= 4;
  const str = (): string => (flex ? r.compactString() : r.string());
  const nstr = (): string | null => (flex ? r.compactNullableString() : r.nullableString());
  const bytes = (): Buffer => Buffer.from(flex ? r.compactBytes() : r.bytes());
  const protocolType = str();
  const generation = r.int32();
  const protocol = nstr();
  const leader = nstr();
  const currentStateTimestamp = version >= 2 ? num(r) : -1;
  const n = flex ? r.compactArrayLength(8) : r.arrayLength(8);
  const members: GroupMemberMetadata[] = [];
  for (let i = 0; i < n; i++) {
    const memberId = str();
    const groupInstanceId = version >= 3 ? nstr() : null;
    const clientId = str();
    const clientHost = str();
    const rebalanceTimeout = version >= 1 ? r.int32() : -1;
    const sessionTimeout = r.int32();
    const subscription = bytes();
    const assignment = bytes();
    if (flex) r.taggedFields();
    members.push({ memberId, groupInstanceId, clientId, clientHost, rebalanceTimeout, sessionTimeout, subscription, assignment });
  }
  return { protocolType, generation, protocol, leader, currentStateTimestamp, members };
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
