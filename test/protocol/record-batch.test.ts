import { describe, expect, it } from 'vitest';
import { Codec } from '../../src/protocol/compression.js';
import { crc32c } from '../../src/protocol/crc32c.js';
import { crc32cJs } from '../helpers/crc32c-js.js';
import { DecodeError } from '../../src/protocol/decode-error.js';
import {
  BATCH,
  BatchErrorCode,
  iterateBatches,
  patchBaseOffset,
  patchLogAppendTime,
  patchPartitionLeaderEpoch,
  RecordBatchView,
  validateProduceRecords,
} from '../../src/protocol/record-batch.js';
import { buildRecordBatch, decodeRecords, type RecordInput } from '../../src/protocol/records.js';

const T0 = 1_764_000_000_000;

function sampleRecords(n: number, valueSize = 40): RecordInput[] {
  return Array.from({ length: n }, (_, i) => ({
    key: i % 3 === 0 ? null : Buffer.from(`key-${i}`),
    value: i % 5 === 4 ? null : Buffer.alloc(valueSize, 97 + (i % 26)),
    headers: i % 2 === 0 ? [{ key: 'h', value: Buffer.from([i & 0xff]) }, { key: 'nul', value: null }] : [],
    timestamp: T0 + i * 3 - (i % 4 === 1 ? 100 : 0),
  }));
}

describe('buildRecordBatch / decodeRecords', () => {
  for (const [name, codec] of Object.entries(Codec)) {
    it(`round-trips ${name} with a valid CRC`, () => {
      const input = sampleRecords(50);
      const buf = buildRecordBatch({
        baseOffset: 1000,
        partitionLeaderEpoch: 7,
        producerId: 4242,
        producerEpoch: 3,
        baseSequence: 10,
        isTransactional: true,
        compression: codec,
        records: input,
      });
      const v = new RecordBatchView(buf);
      expect(v.sizeInBytes).toBe(buf.length);
      expect(v.magic).toBe(2);
      expect(v.compression).toBe(codec);
      expect(v.isValid()).toBe(true);
      expect(crc32cJs(buf.subarray(BATCH.ATTRIBUTES))).toBe(v.crc);
      expect(v.baseOffset).toBe(1000);
      expect(v.lastOffsetDelta).toBe(49);
      expect(v.recordsCount).toBe(50);
      expect(v.producerId).toBe(4242);
      expect(v.producerEpoch).toBe(3);
      expect(v.baseSequence).toBe(10);
      expect(v.isTransactional).toBe(true);
      expect(v.isControl).toBe(false);
      expect(v.partitionLeaderEpoch).toBe(7);
      expect(v.baseTimestamp).toBe(T0);
      expect(v.maxTimestamp).toBe(Math.max(...input.map((r) => r.timestamp!)));
      const recs = decodeRecords(v);
      expect(recs.length).toBe(50);
      recs.forEach((r, i) => {
        expect(r.offset).toBe(1000 + i);
        expect(r.sequence).toBe(10 + i);
        expect(r.timestamp).toBe(input[i]!.timestamp);
        expect(r.key).toEqual(input[i]!.key);
        expect(r.value).toEqual(input[i]!.value);
        expect(r.headers).toEqual(input[i]!.headers);
      });
    });
  }

  it('compresses repetitive data in every codec', () => {
    const records = sampleRecords(200, 500);
    const plain = buildRecordBatch({ records, now: T0 }).length;
    for (const codec of [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]) {
      expect(buildRecordBatch({ records, compression: codec, now: T0 }).length).toBeLessThan(plain / 4);
    }
  });

  it('uses maxTimestamp for every record of a LogAppendTime batch', () => {
    const buf = buildRecordBatch({ records: sampleRecords(3), timestampType: 'log-append', now: T0 + 99 });
    const v = new RecordBatchView(buf);
    expect(v.timestampType).toBe('log-append');
    expect(v.maxTimestamp).toBe(T0 + 99);
    expect(decodeRecords(v).map((r) => r.timestamp)).toEqual([T0 + 99, T0 + 99, T0 + 99]);
  });

  it('keeps explicit offset deltas (compacted batches) and wraps sequences', () => {
    const buf = buildRecordBatch({
      baseSequence: 0x7ffffffe,
      producerId: 1,
      producerEpoch: 0,
      records: [{ value: Buffer.from('a'), offsetDelta: 0 }, { value: Buffer.from('b'), offsetDelta: 5 }],
      now: T0,
    });
    const v = new RecordBatchView(buf);
    expect(v.lastOffsetDelta).toBe(5);
    expect(decodeRecords(v).map((r) => [r.offset, r.sequence])).toEqual([[0, 0x7ffffffe], [5, 3]]);
  });

  it('rejects bad builder input', () => {
    expect(() => buildRecordBatch({ records: [] })).toThrow(RangeError);
    expect(() => buildRecordBatch({ records: [{ offsetDelta: 1 }, { offsetDelta: 1 }] })).toThrow(RangeError);
  });

  it('leaves the CRC valid after patching baseOffset and partitionLeaderEpoch', () => {
    const buf = buildRecordBatch({ records: sampleRecords(5), compression: Codec.LZ4 });
    const crc = new RecordBatchView(buf).crc;
    patchBaseOffset(buf, 0, 2 ** 40 + 17);
    patchPartitionLeaderEpoch(buf, 0, 12345);
    const v = new RecordBatchView(buf);
    expect(v.baseOffset).toBe(2 ** 40 + 17);
    expect(v.partitionLeaderEpoch).toBe(12345);
    expect(v.crc).toBe(crc);
    expect(v.isValid()).toBe(true);
    expect(decodeRecords(v)[4]!.offset).toBe(2 ** 40 + 21);
  });

  it('stamps LogAppendTime in place with a recomputed CRC', () => {
    const padded = Buffer.concat([Buffer.alloc(9), buildRecordBatch({ records: sampleRecords(4), compression: Codec.GZIP, now: T0 })]);
    const v = new RecordBatchView(padded, 9);
    patchLogAppendTime(v, T0 + 5000);
    expect(v.isValid()).toBe(true);
    expect(v.timestampType).toBe('log-append');
    expect(v.compression).toBe(Codec.GZIP);
    expect(decodeRecords(v).map((r) => r.timestamp)).toEqual([T0 + 5000, T0 + 5000, T0 + 5000, T0 + 5000]);
  });

  it('detects corruption anywhere under the CRC', () => {
    const buf = buildRecordBatch({ records: sampleRecords(5) });
    for (const at of [BATCH.ATTRIBUTES, BATCH.RECORDS_COUNT + 2, buf.length - 1]) {
      const copy = Buffer.from(buf);
      copy[at]! ^= 0x10;
      expect(new RecordBatchView(copy).isValid()).toBe(false);
    }
  });

  it('throws DecodeError on malformed records', () => {
    const buf = buildRecordBatch({ records: sampleRecords(3) });
    const lying = Buffer.from(buf);
    lying.writeInt32BE(4, BATCH.RECORDS_COUNT);
    expect(() => decodeRecords(new RecordBatchView(lying))).toThrow(DecodeError);
    const huge = Buffer.from(buf);
    huge.writeInt32BE(0x7fffffff, BATCH.RECORDS_COUNT);
    expect(() => decodeRecords(new RecordBatchView(huge))).toThrow(DecodeError);
    const badZ = buildRecordBatch({ records: sampleRecords(3), compression: Codec.ZSTD });
    badZ[BATCH.HEADER_SIZE + 6]! ^= 0xff;
    expect(() => decodeRecords(new RecordBatchView(badZ))).toThrow(DecodeError);
  });
});

describe('iterateBatches', () => {
  const a = buildRecordBatch({ baseOffset: 0, records: sampleRecords(3) });
  const b = buildRecordBatch({ baseOffset: 3, records: sampleRecords(2), compression: Codec.GZIP });
  const blob = Buffer.concat([a, b]);

  it('walks whole batches', () => {
    const it = iterateBatches(blob);
    expect([...it].map((v) => [v.offset, v.baseOffset, v.recordsCount])).toEqual([[0, 0, 3], [a.length, 3, 2]]);
    expect(it.partialTail).toBe(false);
    expect(it.validBytes).toBe(blob.length);
  });

  it('stops cleanly at every possible truncation and reports the partial tail', () => {
    for (let cut = 1; cut < b.length; cut++) {
      const it = iterateBatches(blob, 0, a.length + cut);
      expect([...it].length).toBe(1);
      expect(it.partialTail).toBe(true);
      expect(it.validBytes).toBe(a.length);
    }
  });

  it('throws DecodeError for a size field no entry can have', () => {
    const bad = Buffer.from(blob);
    bad.writeInt32BE(3, a.length + BATCH.BATCH_LENGTH);
    expect(() => [...iterateBatches(bad)]).toThrow(DecodeError);
    bad.writeInt32BE(-5, a.length + BATCH.BATCH_LENGTH);
    expect(() => [...iterateBatches(bad)]).toThrow(DecodeError);
    bad.writeInt32BE(30, a.length + BATCH.BATCH_LENGTH); // above the legacy minimum, below magic 2's header
    expect(() => [...iterateBatches(bad)]).toThrow(DecodeError);
  });

  it('walks a sub-range of a larger buffer', () => {
    const padded = Buffer.concat([Buffer.alloc(7), blob, Buffer.alloc(5)]);
    const views = [...iterateBatches(padded, 7, 7 + blob.length)];
    expect(views.map((v) => v.isValid())).toEqual([true, true]);
  });
});

describe('validateProduceRecords', () => {
  const good = (): Buffer =>
    buildRecordBatch({ producerId: 9, producerEpoch: 0, baseSequence: 0, records: sampleRecords(4), compression: Codec.SNAPPY });

  it('accepts a good batch and returns its view', () => {
    const buf = good();
    const r = validateProduceRecords(buf, { apiVersion: 9 });
    expect(r.errorCode).toBe(0);
    expect(r.batch?.recordsCount).toBe(4);
  });

  it('ignores trailing bytes that are not a whole batch, as Kafka trims them', () => {
    const buf = Buffer.concat([good(), Buffer.alloc(5)]);
    const r = validateProduceRecords(buf, { apiVersion: 9 });
    expect(r.errorCode).toBe(0);
    expect(r.batch!.sizeInBytes).toBe(buf.length - 5);
  });

  const cases: [string, (b: Buffer) => Buffer | null, number, number?][] = [
    ['null records', () => null, BatchErrorCode.INVALID_RECORD],
    ['empty records', () => Buffer.alloc(0), BatchErrorCode.INVALID_RECORD],
    ['only a partial batch', (b) => b.subarray(0, 40), BatchErrorCode.INVALID_RECORD],
    ['two batches', (b) => Buffer.concat([b, b]), BatchErrorCode.INVALID_RECORD],
    ['a bad CRC', (b) => (b[b.length - 1]! ^= 1, b), BatchErrorCode.CORRUPT_MESSAGE],
    ['magic 1', (b) => (b.writeInt8(1, BATCH.MAGIC), b), BatchErrorCode.INVALID_RECORD],
    ['a non-zero baseOffset', (b) => (patchBaseOffset(b, 0, 5), b), BatchErrorCode.INVALID_RECORD],
    ['a size below the header', (b) => (b.writeInt32BE(20, BATCH.BATCH_LENGTH), b), BatchErrorCode.CORRUPT_MESSAGE],
    ['zstd before v7', (b) => rebuild(b, { compression: Codec.ZSTD }), BatchErrorCode.UNSUPPORTED_COMPRESSION_TYPE, 6],
    ['an inconsistent lastOffsetDelta', (b) => recrc(b, (x) => x.writeInt32BE(7, BATCH.LAST_OFFSET_DELTA)), BatchErrorCode.INVALID_RECORD],
    ['a zero record count', (b) => recrc(b, (x) => x.writeInt32BE(0, BATCH.RECORDS_COUNT)), BatchErrorCode.INVALID_RECORD],
    ['a control batch', (b) => recrc(b, (x) => x.writeInt16BE(x.readInt16BE(BATCH.ATTRIBUTES) | 0x20, BATCH.ATTRIBUTES)), BatchErrorCode.INVALID_RECORD],
    ['a producer id without sequence', (b) => recrc(b, (x) => x.writeInt32BE(-1, BATCH.BASE_SEQUENCE)), BatchErrorCode.INVALID_RECORD],
    ['an unknown codec', (b) => recrc(b, (x) => x.writeInt16BE(6, BATCH.ATTRIBUTES)), BatchErrorCode.CORRUPT_MESSAGE],
  ];
  for (const [what, mutate, code, version] of cases) {
    it(`returns error ${code} for ${what}`, () => {
      const r = validateProduceRecords(mutate(good()), { apiVersion: version ?? 9 });
      expect(r.errorCode).toBe(code);
      expect(r.message).toBeTruthy();
      expect(r.batch).toBeNull();
    });
  }

  it('passes a transactional batch without a producer id, as Kafka does (it belongs to no producer)', () => {
    const r = validateProduceRecords(rebuild(good(), { isTransactional: true, producerId: -1, baseSequence: -1 }), { apiVersion: 9 });
    expect(r.errorCode).toBe(0);
    expect(r.batch?.isTransactional).toBe(true);
  });

  it('enforces max.message.bytes', () => {
    const buf = good();
    expect(validateProduceRecords(buf, { apiVersion: 9, maxMessageSize: buf.length }).errorCode).toBe(0);
    expect(validateProduceRecords(buf, { apiVersion: 9, maxMessageSize: buf.length - 1 }).errorCode).toBe(BatchErrorCode.MESSAGE_TOO_LARGE);
  });
});

function recrc(b: Buffer, f: (b: Buffer) => void): Buffer {
  f(b);
  b.writeUInt32BE(crc32c(b.subarray(BATCH.ATTRIBUTES)), BATCH.CRC);
  return b;
}

function rebuild(_b: Buffer, over: Parameters<typeof buildRecordBatch>[0] extends infer T ? Partial<T> : never): Buffer {
  return buildRecordBatch({ producerId: 9, producerEpoch: 0, baseSequence: 0, records: sampleRecords(4), ...over });
}
