import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../../src/protocol/decode-error.js';
import { Reader } from '../../../src/protocol/reader.js';
import { Writer } from '../../../src/protocol/writer.js';
import { decodeApiVersionsRequest, encodeApiVersionsRequest } from '../../../src/protocol/generated/messages/api-versions-request.js';
import { decodeMetadataRequest, encodeMetadataRequest } from '../../../src/protocol/generated/messages/metadata-request.js';
import { decodeRequestHeader, encodeRequestHeader } from '../../../src/protocol/generated/messages/request-header.js';
import { decodeResponseHeader, encodeResponseHeader } from '../../../src/protocol/generated/messages/response-header.js';
import { decodeFetchRequest, encodeFetchRequest } from '../../../src/protocol/generated/messages/fetch-request.js';
import type { FetchRequestInput } from '../../../src/protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse, encodeFetchResponse } from '../../../src/protocol/generated/messages/fetch-response.js';
import {
  decodeConsumerGroupHeartbeatResponse,
  encodeConsumerGroupHeartbeatResponse,
} from '../../../src/protocol/generated/messages/consumer-group-heartbeat-response.js';
import { decodeProduceRequest, encodeProduceRequest } from '../../../src/protocol/generated/messages/produce-request.js';
import { decodeCreateTopicsRequest, encodeCreateTopicsRequest } from '../../../src/protocol/generated/messages/create-topics-request.js';
import {
  decodeConsumerGroupMemberMetadataValue,
  encodeConsumerGroupMemberMetadataValue,
} from '../../../src/protocol/generated/messages/consumer-group-member-metadata-value.js';
import { LastMirrorEpochsKeyTypeId } from '../../../src/protocol/generated/messages/last-mirror-epochs-key.js';
import { MirrorTopicStateChangeRecordTypeId } from '../../../src/protocol/generated/messages/mirror-topic-state-change-record.js';

function bytes(fn: (w: Writer) => void): Buffer {
  const w = new Writer();
  fn(w);
  return Buffer.from(w.toBuffer());
}

function hex(b: Buffer): string {
  return b.toString('hex');
}

describe('known byte layouts', () => {
  it('ApiVersions v0 request is an empty body and drops the ignorable v3 fields', () => {
    const b = bytes((w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'fjord', clientSoftwareVersion: '1' }, 0));
    expect(b.length).toBe(0);
    expect(decodeApiVersionsRequest(new Reader(b), 0)).toEqual({ clientSoftwareName: '', clientSoftwareVersion: '', clusterId: null, nodeId: -1 });
  });

  it('ApiVersions v3 request uses compact strings and an empty tag section', () => {
    const b = bytes((w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'fjord', clientSoftwareVersion: '1.0' }, 3));
    expect(hex(b)).toBe('06' + Buffer.from('fjord').toString('hex') + '04' + Buffer.from('1.0').toString('hex') + '00');
    expect(decodeApiVersionsRequest(new Reader(b), 3)).toEqual({ clientSoftwareName: 'fjord', clientSoftwareVersion: '1.0', clusterId: null, nodeId: -1 });
  });

  it('ApiVersions v5 request appends a nullable compact ClusterId and an int32 NodeId (KIP-1242)', () => {
    const b = bytes((w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'fjord', clientSoftwareVersion: '1.0', clusterId: 'abc', nodeId: 7 }, 5));
    const names = '06' + Buffer.from('fjord').toString('hex') + '04' + Buffer.from('1.0').toString('hex');
    expect(hex(b)).toBe(names + '04' + Buffer.from('abc').toString('hex') + '00000007' + '00');
    expect(decodeApiVersionsRequest(new Reader(b), 5)).toEqual({ clientSoftwareName: 'fjord', clientSoftwareVersion: '1.0', clusterId: 'abc', nodeId: 7 });
    const unset = bytes((w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'fjord', clientSoftwareVersion: '1.0' }, 5));
    expect(hex(unset)).toBe(names + '00' + 'ffffffff' + '00');
    // Ignorable in older versions: a v4 encoding just leaves them out.
    const v4 = bytes((w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'fjord', clientSoftwareVersion: '1.0', clusterId: 'abc', nodeId: 7 }, 4));
    expect(hex(v4)).toBe(names + '00');
  });

  it('RequestHeader v2 keeps an int16-length ClientId and adds a tag section', () => {
    const b = bytes((w) => encodeRequestHeader(w, { requestApiKey: 3, requestApiVersion: 12, correlationId: 7, clientId: 'ab' }, 2));
    expect(hex(b)).toBe('0003' + '000c' + '00000007' + '0002' + '6162' + '00');
    const v1 = bytes((w) => encodeRequestHeader(w, { requestApiKey: 18, requestApiVersion: 0, correlationId: 1, clientId: null }, 1));
    expect(hex(v1)).toBe('0012' + '0000' + '00000001' + 'ffff');
    expect(decodeRequestHeader(new Reader(v1), 1).clientId).toBeNull();
  });

  it('ResponseHeader v0 is the correlation id; v1 adds a tag section', () => {
    expect(hex(bytes((w) => encodeResponseHeader(w, { correlationId: 258 }, 0)))).toBe('00000102');
    const v1 = bytes((w) => encodeResponseHeader(w, { correlationId: 258 }, 1));
    expect(hex(v1)).toBe('0000010200');
    expect(decodeResponseHeader(new Reader(v1), 1)).toEqual({ correlationId: 258 });
  });

  it('flexible Metadata v12 request: compact arrays, nullable names, tagged fields', () => {
    const topicId = '0123456789abcdef0011223344556677';
    const canonical = '01234567-89ab-cdef-0011-223344556677';
    const b = bytes((w) =>
      encodeMetadataRequest(
        w,
        {
          topics: [{ topicId: canonical, name: 'ab', unknownTaggedFields: new Map([[9, Buffer.from([0xee])]]) }, { name: null }],
          allowAutoTopicCreation: false,
          includeTopicAuthorizedOperations: true,
        },
        12,
      ),
    );
    const expected =
      '03' + // 2 topics, compact
      topicId + '03' + '6162' + '01' + '09' + '01' + 'ee' + // topic 1: uuid, "ab", one tag (9, 1 byte)
      '00'.repeat(16) + '00' + '00' + // topic 2: zero uuid, null name, no tags
      '00' + '01' + // allowAutoTopicCreation=false, includeTopicAuthorizedOperations=true
      '00';
    expect(hex(b)).toBe(expected);
    const back = decodeMetadataRequest(new Reader(b), 12);
    expect(back.topics?.[0]?.topicId).toBe(canonical);
    expect(back.topics?.[0]?.unknownTaggedFields?.get(9)).toEqual(Buffer.from([0xee]));
    expect(back.topics?.[1]?.name).toBeNull();
    expect(back.allowAutoTopicCreation).toBe(false);
  });

  it('Metadata v0 topics are a non-nullable int32 array; v1 encodes null as -1', () => {
    expect(hex(bytes((w) => encodeMetadataRequest(w, { topics: [{ name: 'x' }] }, 0)))).toBe('00000001' + '0001' + '78');
    expect(hex(bytes((w) => encodeMetadataRequest(w, { topics: null }, 1)))).toBe('ffffffff');
    expect(() => bytes((w) => encodeMetadataRequest(w, { topics: null }, 0))).toThrow(/not nullable/);
    expect(decodeMetadataRequest(new Reader(Buffer.from('ffffffff', 'hex')), 1).topics).toBeNull();
    expect(() => decodeMetadataRequest(new Reader(Buffer.from('ffffffff', 'hex')), 0)).toThrow(DecodeError);
  });

  it('a nullable inline struct is int8 -1 when null and int8 1 before its fields', () => {
    const nullAssignment = bytes((w) => encodeConsumerGroupHeartbeatResponse(w, { memberId: 'm', assignment: null }, 0));
    const withAssignment = bytes((w) => encodeConsumerGroupHeartbeatResponse(w, { memberId: 'm', assignment: { topicPartitions: [] } }, 0));
    // ... MemberEpoch, HeartbeatIntervalMs, then the marker, then the assignment, then the tag section
    expect(nullAssignment.subarray(-2)).toEqual(Buffer.from([0xff, 0x00]));
    expect(withAssignment.subarray(-4)).toEqual(Buffer.from([0x01, 0x01, 0x00, 0x00]));
    expect(decodeConsumerGroupHeartbeatResponse(new Reader(nullAssignment), 0).assignment).toBeNull();
    expect(decodeConsumerGroupHeartbeatResponse(new Reader(withAssignment), 0).assignment).toEqual({ topicPartitions: [] });
  });
});

describe('tagged fields', () => {
  const fetch: FetchRequestInput = {
    clusterId: 'c1',
    topics: [{ topicId: '00000000-0000-0000-0000-000000000001', partitions: [{ partition: 0, fetchOffset: 5n, mirrorLeaderEpoch: 4 }] }],
  };

  it('keeps unknown tags and writes them in ascending order merged with known ones', () => {
    // In v12 tag 1 (ReplicaState) is not known yet, so it travels as an unknown tag.
    const unknown = new Map([
      [2, Buffer.from([0xbb])],
      [1, Buffer.from([0xaa])],
    ]);
    const b = bytes((w) => encodeFetchRequest(w, { ...fetch, topics: [], unknownTaggedFields: unknown }, 12));
    // top-level tag section: count 3, then tag 0 (ClusterId "c1"), tag 1, tag 2
    expect(hex(b.subarray(-12))).toBe('03' + '00' + '03' + '03' + '6331' + '01' + '01' + 'aa' + '02' + '01' + 'bb');
    const back = decodeFetchRequest(new Reader(b), 12);
    expect(back.clusterId).toBe('c1');
    expect([...(back.unknownTaggedFields ?? new Map()).keys()]).toEqual([1, 2]);
    expect(bytes((w) => encodeFetchRequest(w, back, 12))).toEqual(b);
  });

  it('a known tag of a later version is kept as unknown by an older version', () => {
    const v19 = bytes((w) => encodeFetchRequest(w, fetch, 19));
    const back19 = decodeFetchRequest(new Reader(v19), 19);
    expect(back19.topics[0]?.partitions[0]?.mirrorLeaderEpoch).toBe(4);
    // the partition bytes are identical in v18 apart from the version, so read them as v18
    const back18 = decodeFetchRequest(new Reader(v19), 18);
    const p18 = back18.topics[0]?.partitions[0];
    expect(p18?.mirrorLeaderEpoch).toBe(-1);
    expect(p18?.unknownTaggedFields?.get(2)).toEqual(Buffer.from([0, 0, 0, 4]));
    expect(bytes((w) => encodeFetchRequest(w, back18, 18))).toEqual(v19);
  });

  it('tagged fields are written only when they differ from their default', () => {
    const withDefault = bytes((w) => encodeFetchRequest(w, { ...fetch, topics: [], clusterId: null }, 12));
    expect(withDefault.subarray(-1)).toEqual(Buffer.from([0]));
  });

  it('FetchResponse v19 carries MirrorLeaderEpoch as partition tag 3', () => {
    const b = bytes((w) =>
      encodeFetchResponse(w, { responses: [{ topicId: '00000000-0000-0000-0000-000000000002', partitions: [{ partitionIndex: 1, mirrorLeaderEpoch: 9 }] }] }, 19),
    );
    // ... records (null → 00), then the partition tag section: 1 tag, tag 3, size 4, int32 9
    expect(hex(b.subarray(-10))).toBe('00' + '01' + '03' + '04' + '00000009' + '00' + '00');
    expect(decodeFetchResponse(new Reader(b), 19).responses[0]?.partitions[0]?.mirrorLeaderEpoch).toBe(9);
  });
});

describe('tagged nullable structs', () => {
  it('mark null with uvarint 0 and presence with uvarint 1, unlike positional ones', () => {
    // ClassicMemberMetadata is tagged (tag 0), nullable, and defaults to an empty struct, so null is written
    const b = bytes((w) => encodeConsumerGroupMemberMetadataValue(w, { classicMemberMetadata: null }, 0));
    expect(hex(b.subarray(-4))).toBe('01' + '00' + '01' + '00');
    expect(decodeConsumerGroupMemberMetadataValue(new Reader(b), 0).classicMemberMetadata).toBeNull();
    const empty = bytes((w) => encodeConsumerGroupMemberMetadataValue(w, {}, 0));
    expect(empty.subarray(-1)).toEqual(Buffer.from([0]));
    expect(decodeConsumerGroupMemberMetadataValue(new Reader(empty), 0).classicMemberMetadata).toEqual({ sessionTimeoutMs: 0, supportedProtocols: [] });
  });
});

describe('version checks', () => {
  it('refuses a non-default value in a version that cannot carry a non-ignorable field', () => {
    expect(() => bytes((w) => encodeMetadataRequest(w, { topics: [], allowAutoTopicCreation: false }, 3))).toThrow(/AllowAutoTopicCreation/);
    expect(() => bytes((w) => encodeMetadataRequest(w, { topics: [], includeClusterAuthorizedOperations: true }, 11))).toThrow(
      /IncludeClusterAuthorizedOperations cannot be set in version 11/,
    );
    // the default value is fine, and ignorable fields are dropped silently
    expect(() => bytes((w) => encodeMetadataRequest(w, { topics: [], allowAutoTopicCreation: true }, 3))).not.toThrow();
    expect(() => bytes((w) => encodeFetchRequest(w, { topics: [{ partitions: [{ mirrorLeaderEpoch: 3 }] }] }, 18))).not.toThrow();
  });

  it('CreateTopics v8 carries the nullable MirrorInfo struct; v7 drops it (ignorable)', () => {
    const topic = { name: 't', numPartitions: 1, replicationFactor: 1, mirrorInfo: { topicId: '00000000-0000-0000-0000-0000000000aa' } };
    const v8 = decodeCreateTopicsRequest(new Reader(bytes((w) => encodeCreateTopicsRequest(w, { topics: [topic] }, 8))), 8);
    expect(v8.topics[0]?.mirrorInfo).toEqual({ topicId: '00000000-0000-0000-0000-0000000000aa' });
    const v7 = decodeCreateTopicsRequest(new Reader(bytes((w) => encodeCreateTopicsRequest(w, { topics: [topic] }, 7))), 7);
    expect(v7.topics[0]?.mirrorInfo).toBeNull();
  });

  it('rejects versions outside the valid range', () => {
    expect(() => bytes((w) => encodeProduceRequest(w, {}, 2))).toThrow(/ProduceRequest v2/);
    expect(() => decodeProduceRequest(new Reader(Buffer.alloc(64)), 14)).toThrow(DecodeError);
  });
});

describe('decoding hostile input', () => {
  const full = bytes((w) =>
    encodeProduceRequest(
      w,
      { transactionalId: null, acks: -1, timeoutMs: 1000, topicData: [{ name: 'topic', partitionData: [{ index: 0, records: Buffer.alloc(40, 7) }] }] },
      9,
    ),
  );

  it('every truncation is a DecodeError', () => {
    for (let n = 0; n < full.length; n++) {
      expect(() => decodeProduceRequest(new Reader(full.subarray(0, n)), 9), `prefix ${n}`).toThrow(DecodeError);
    }
    expect(() => decodeProduceRequest(new Reader(full), 9)).not.toThrow();
  });

  it('an array count larger than the remaining bytes fails before allocating', () => {
    const huge = Buffer.from('ffff' + '0000' + '000003e8' + '7fffffff', 'hex');
    expect(() => decodeProduceRequest(new Reader(huge), 3)).toThrow(/cannot fit/);
  });

  it('records are a zero-copy view of the input and int64 is exact', () => {
    const r = new Reader(full);
    const back = decodeProduceRequest(r, 9);
    const rec = back.topicData[0]?.partitionData[0]?.records;
    expect(rec?.buffer).toBe(full.buffer);
    const max = 2n ** 63n - 1n;
    const fr = bytes((w) => encodeFetchResponse(w, { responses: [{ topic: 't', partitions: [{ highWatermark: max, logStartOffset: -(2n ** 63n) }] }] }, 11));
    const p = decodeFetchResponse(new Reader(fr), 11).responses[0]?.partitions[0];
    expect(p?.highWatermark).toBe(max);
    expect(p?.logStartOffset).toBe(-(2n ** 63n));
  });
});

describe('record type ids', () => {
  it('exports the type id of coordinator and metadata records', () => {
    expect(LastMirrorEpochsKeyTypeId).toBe(1);
    expect(MirrorTopicStateChangeRecordTypeId).toBe(30);
  });
});

describe('array length guard', () => {
  it('counts a nullable struct element field as its one-byte null marker', async () => {
    const { encodeStreamsGroupDescribeResponse, decodeStreamsGroupDescribeResponse } = await import(
      '../../../src/protocol/generated/messages/streams-group-describe-response.js'
    );
    const group = { groupId: '', groupState: '', topology: null, members: [] };
    const buf = bytes((w) => encodeStreamsGroupDescribeResponse(w, { groups: [group] }, 0));
    expect(decodeStreamsGroupDescribeResponse(new Reader(buf), 0).groups[0]).toMatchObject(group);
  });
});
