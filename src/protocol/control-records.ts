import { DecodeError } from './decode-error.js';
import { Reader } from './reader.js';
import type { RecordBatchView } from './record-batch.js';
import { buildRecordBatch } from './records.js';
import { forEachRecord } from './record-walk.js';

/**
 * Control records: the one record of a control batch, whose key names its type (Kafka's
 * ControlRecordType: key = version int16 (0) + type int16). COMMIT/ABORT end a transaction
 * (EndTransactionMarker: value = version int16 (0) + coordinatorEpoch int32); MIRROR_PID_RESET
 * (KIP-1279) tells the log to forget every producer's state once a mirror topic stops mirroring
 * (value = MirrorPidResetRecord v0, a flexible message: Version int16, SourceClusterId compact
 * string, empty tagged fields).
 */
export const ControlRecordType = {
  ABORT: 0,
  COMMIT: 1,
  LEADER_CHANGE: 2,
  SNAPSHOT_HEADER: 3,
  SNAPSHOT_FOOTER: 4,
  KRAFT_VERSION: 5,
  KRAFT_VOTERS: 6,
  MIRROR_PID_RESET: 7,
  UNKNOWN: -1,
} as const;

export function controlRecordKey(type: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeInt16BE(0, 0);
  b.writeInt16BE(type, 2);
  return b;
}

/** The type in a control record key; UNKNOWN for a type this code does not know (readers skip it). */
export function parseControlRecordKey(key: Buffer | null): { version: number; type: number } {
  if (key === null || key.length < 4) throw new DecodeError('control record key shorter than 4 bytes');
  const version = key.readInt16BE(0);
  if (version < 0) throw new DecodeError(`bad control record key version ${version}`);
  const type = key.readInt16BE(2);
  return { version, type: type >= 0 && type <= 7 ? type : ControlRecordType.UNKNOWN };
}

export interface EndTxnMarker {
  readonly version: number;
  readonly coordinatorEpoch: number;
}

export function endTxnMarkerValue(coordinatorEpoch: number): Buffer {
  const b = Buffer.allocUnsafe(6);
  b.writeInt16BE(0, 0);
  b.writeInt32BE(coordinatorEpoch, 2);
  return b;
}

export function parseEndTxnMarker(value: Buffer | null): EndTxnMarker {
  if (value === null || value.length < 6) throw new DecodeError('end transaction marker value shorter than 6 bytes');
  const version = value.readInt16BE(0);
  if (version < 0) throw new DecodeError(`bad end transaction marker version ${version}`);
  return { version, coordinatorEpoch: value.readInt32BE(2) };
}

interface MirrorPidReset {
  readonly version: number;
  readonly sourceClusterId: string;
}

function mirrorPidResetValue(sourceClusterId: string): Buffer {
  const id = Buffer.from(sourceClusterId, 'utf8');
  const lenBytes: number[] = [];
  let n = id.length + 1;
  while (n >= 0x80) {
    lenBytes.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  lenBytes.push(n);
  return Buffer.concat([Buffer.from([0, 0]), Buffer.from(lenBytes), id, Buffer.from([0])]);
}

export function parseMirrorPidReset(value: Buffer | null): MirrorPidReset {
  if (value === null) throw new DecodeError('null MIRROR_PID_RESET value');
  const r = new Reader(value);
  const version = r.int16();
  const sourceClusterId = r.compactString();
  r.taggedFields();
  return { version, sourceClusterId };
}

interface MarkerBatchBase {
  readonly baseOffset?: number;
  readonly partitionLeaderEpoch?: number;
  /** Epoch milliseconds of the marker. */
  readonly timestamp?: number;
}

interface EndTxnMarkerBatchInput extends MarkerBatchBase {
  readonly commit: boolean;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly coordinatorEpoch: number;
}

/** A transactional control batch holding one COMMIT or ABORT marker (as the broker writes on WriteTxnMarkers). */
export function buildEndTxnMarkerBatch(input: EndTxnMarkerBatchInput): Buffer {
  return buildRecordBatch({
    baseOffset: input.baseOffset ?? 0,
    partitionLeaderEpoch: input.partitionLeaderEpoch ?? -1,
    producerId: input.producerId,
    producerEpoch: input.producerEpoch,
    baseSequence: -1,
    isTransactional: true,
    isControl: true,
    now: input.timestamp ?? Date.now(),
    records: [
      {
        key: controlRecordKey(input.commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT),
        value: endTxnMarkerValue(input.coordinatorEpoch),
      },
    ],
  });
}

interface MirrorPidResetBatchInput extends MarkerBatchBase {
  readonly sourceClusterId: string;
}

/**
 * The KIP-1279 MIRROR_PID_RESET batch: a non-transactional control batch without producer id,
 * built like KRaft's control batches (MemoryRecords.withMirrorPidResetRecord in the prototype).
 */
export function buildMirrorPidResetBatch(input: MirrorPidResetBatchInput): Buffer {
  return buildRecordBatch({
    baseOffset: input.baseOffset ?? 0,
    partitionLeaderEpoch: input.partitionLeaderEpoch ?? -1,
    isControl: true,
    now: input.timestamp ?? Date.now(),
    records: [{ key: controlRecordKey(ControlRecordType.MIRROR_PID_RESET), value: mirrorPidResetValue(input.sourceClusterId) }],
  });
}

/**
 * The control type of a control batch: its first record's key's type (a ControlRecordType, or a
 * type this code does not know); -1 for a data batch, a compressed one or one that cannot be read.
 * Reads the record in place, copying nothing: it runs on every control batch appended.
 */
export function controlTypeOf(batch: RecordBatchView): number {
  if (!batch.isControl || batch.compression !== 0) return -1;
  let type = -1;
  try {
    forEachRecord(batch, (r) => {
      if (type === -1 && r.key !== null && r.key.length >= 4) type = r.key.readInt16BE(2);
    });
  } catch {
    return -1;
  }
  return type;
}

/** The coordinator epoch of a COMMIT/ABORT marker batch (parseEndTxnMarker of its record's value); -1 when unreadable. */
export function markerCoordinatorEpoch(batch: RecordBatchView): number {
  let epoch = -1;
  try {
    forEachRecord(batch, (r) => {
      if (epoch === -1 && r.valueLength >= 0) epoch = parseEndTxnMarker(batch.buf.subarray(r.valueAt, r.valueAt + r.valueLength)).coordinatorEpoch;
    });
  } catch {
    return -1;
  }
  return epoch;
}
