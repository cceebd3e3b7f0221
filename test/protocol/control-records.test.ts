import { describe, expect, it } from 'vitest';
import {
  buildEndTxnMarkerBatch,
  buildMirrorPidResetBatch,
  ControlRecordType,
  controlRecordKey,
  controlTypeOf,
  parseControlRecordKey,
  parseEndTxnMarker,
  parseMirrorPidReset,
} from '../../src/protocol/control-records.js';
import { DecodeError } from '../../src/protocol/decode-error.js';
import { RecordBatchView, validateProduceRecords } from '../../src/protocol/record-batch.js';
import { buildRecordBatch, decodeRecords } from '../../src/protocol/records.js';

describe('control records', () => {
  it('builds COMMIT and ABORT markers in Kafka byte layout', () => {
    for (const commit of [true, false]) {
      const buf = buildEndTxnMarkerBatch({ commit, producerId: 77, producerEpoch: 4, coordinatorEpoch: 12, baseOffset: 500, timestamp: 1_700_000_000_000 });
      const v = new RecordBatchView(buf);
      expect(v.isValid()).toBe(true);
      expect(v.isControl).toBe(true);
      expect(v.isTransactional).toBe(true);
      expect([v.producerId, v.producerEpoch, v.baseSequence, v.recordsCount]).toEqual([77, 4, -1, 1]);
      const [rec] = decodeRecords(v);
      expect(rec!.key!.toString('hex')).toBe(commit ? '00000001' : '00000000');
      expect(rec!.value!.toString('hex')).toBe('00000000000c');
      expect(parseEndTxnMarker(rec!.value)).toEqual({ version: 0, coordinatorEpoch: 12 });
      expect(controlTypeOf(v)).toBe(commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT);
    }
  });

  it('builds the KIP-1279 MIRROR_PID_RESET batch: non-transactional control, type 7', () => {
    const buf = buildMirrorPidResetBatch({ sourceClusterId: 'MkU3OEVBNTcwNTJENDM2Qk', baseOffset: 42, partitionLeaderEpoch: 9 });
    const v = new RecordBatchView(buf);
    expect(v.isValid()).toBe(true);
    expect(v.isControl).toBe(true);
    expect(v.isTransactional).toBe(false);
    expect([v.producerId, v.producerEpoch, v.baseSequence, v.partitionLeaderEpoch]).toEqual([-1, -1, -1, 9]);
    const [rec] = decodeRecords(v);
    expect(rec!.offset).toBe(42);
    expect(parseControlRecordKey(rec!.key)).toEqual({ version: 0, type: 7 });
    // Version int16 0, compact string (length+1 = 23), empty tagged fields.
    expect(rec!.value!.subarray(0, 3).toString('hex')).toBe('000017');
    expect(rec!.value![rec!.value!.length - 1]).toBe(0);
    expect(parseMirrorPidReset(rec!.value)).toEqual({ version: 0, sourceClusterId: 'MkU3OEVBNTcwNTJENDM2Qk' });
    expect(controlTypeOf(v)).toBe(ControlRecordType.MIRROR_PID_RESET);
  });

  it('is refused from clients but allowed for the broker itself', () => {
    const buf = buildEndTxnMarkerBatch({ commit: true, producerId: 1, producerEpoch: 0, coordinatorEpoch: 0 });
    expect(validateProduceRecords(buf, { apiVersion: 9 }).errorCode).toBe(87);
    expect(validateProduceRecords(buf, { apiVersion: 9, allowControl: true }).errorCode).toBe(0);
  });

  it('reads unknown types as UNKNOWN and data batches as null', () => {
    expect(parseControlRecordKey(controlRecordKey(42)).type).toBe(ControlRecordType.UNKNOWN);
    expect(controlTypeOf(new RecordBatchView(buildRecordBatch({ records: [{ value: Buffer.from('x') }] })))).toBe(-1);
    expect(() => parseControlRecordKey(Buffer.from([0]))).toThrow(DecodeError);
    expect(() => parseEndTxnMarker(null)).toThrow(DecodeError);
    expect(() => parseMirrorPidReset(Buffer.from([0, 0, 9]))).toThrow(DecodeError);
  });
});
