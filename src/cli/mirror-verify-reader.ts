/**
 * Reads one partition's record batches over the wire in bounded chunks, as a consumer would
 * (Fetch v13+, replica id -1, READ_UNCOMMITTED), and reduces each batch to its header fields and
 * an xxhash64 of its bytes. Only batch headers are read, never records, and at most one Fetch
 * response (`maxBytes`) is held at a time, so a log of any size is walked in constant memory.
 *
 * `fjord cluster-mirrors --verify` walks the source and the destination side by side with it;
 * `--start --dry-run` sums up the batches a failback would truncate.
 */
import { xxh64 } from '@node-rs/xxhash';
import { Apis } from '../client/apis.js';
import type { KafkaClient } from '../client/kafka-client.js';
import { crc32c } from '../protocol/crc32c.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { BATCH, iterateBatches } from '../protocol/record-batch.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { DecodeError } from '../protocol/decode-error.js';

const CONSUMER_REPLICA_ID = -1;
const READ_UNCOMMITTED = 0;
const EARLIEST = -2n;
const LATEST = -1n;

/** A record batch as the walk sees it: header fields and a hash of the whole batch. */
export interface BatchSummary {
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly partitionLeaderEpoch: number;
  readonly recordsCount: number;
  readonly isControl: boolean;
  readonly firstTimestamp: number;
  readonly maxTimestamp: number;
  /** xxhash64 of the batch's bytes, base offset to end. */
  readonly hash: bigint;
  /** Whether the stored CRC-32C matches the batch's bytes (attributes to end). */
  readonly crcOk: boolean;
}

/** One partition as seen on one cluster: where it is led, its topic id and its offsets. */
export interface PartitionLocation {
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  readonly leaderId: number;
  readonly leaderEpoch: number;
}

/** Partition locations of `topics` on the cluster behind `client`, `topic-partition` → location. */
export async function locatePartitions(client: KafkaClient, topics: readonly string[]): Promise<Map<string, PartitionLocation>> {
  const out = new Map<string, PartitionLocation>();
  if (topics.length === 0) return out;
  const md = await client.metadata([...topics]);
  for (const t of md.topics) {
    if (t.errorCode !== ErrorCode.NONE || t.name === null) continue;
    for (const p of t.partitions) {
      out.set(`${t.name}-${p.partitionIndex}`, { topic: t.name, topicId: t.topicId, partition: p.partitionIndex, leaderId: p.leaderId, leaderEpoch: p.leaderEpoch });
    }
  }
  return out;
}

/** Log start offset and high watermark (ListOffsets EARLIEST / LATEST, as a consumer sees them). */
export async function offsetRange(client: KafkaClient, at: PartitionLocation): Promise<{ logStart: number; highWatermark: number }> {
  const ask = async (timestamp: bigint): Promise<number> => {
    const res = await client.send(
      Apis.ListOffsets,
      { replicaId: CONSUMER_REPLICA_ID, isolationLevel: READ_UNCOMMITTED, topics: [{ name: at.topic, partitions: [{ partitionIndex: at.partition, currentLeaderEpoch: -1, timestamp }] }] },
      at.leaderId,
    );
    const p = res.topics[0]?.partitions[0];
    if (p === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `no ListOffsets answer for ${at.topic}-${at.partition}`);
    if (p.errorCode !== ErrorCode.NONE) throw new KafkaError(p.errorCode, `ListOffsets ${at.topic}-${at.partition}`);
    return Number(p.offset);
  };
  return { logStart: await ask(EARLIEST), highWatermark: await ask(LATEST) };
}

/** A walk that could not go on: the error code the cluster answered at `offset`. */
export interface ReadFailure {
  readonly failedAt: number;
  readonly errorCode: number;
}

/**
 * The batches of the partition from the one holding `from` up to those starting before `to`,
 * fetched `maxBytes` at a time. Ends with a ReadFailure when the cluster answers a partition
 * error (say CORRUPT_MESSAGE) or returns nothing before `to`.
 */
export async function* readBatches(client: KafkaClient, at: PartitionLocation, from: number, to: number, maxBytes = 1 << 20): AsyncGenerator<BatchSummary | ReadFailure> {
  let position = from;
  // After an error, one batch per Fetch (a Fetch returns at least one whole batch, KIP-74), so
  // the failure is pinned to the batch the cluster cannot serve, not to the chunk around it.
  let narrow = false;
  while (position < to) {
    const res = await client.send(
      Apis.Fetch,
      {
        replicaId: CONSUMER_REPLICA_ID,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: narrow ? 1 : maxBytes,
        isolationLevel: READ_UNCOMMITTED,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [{ topicId: at.topicId, partitions: [{ partition: at.partition, currentLeaderEpoch: -1, fetchOffset: BigInt(position), partitionMaxBytes: narrow ? 1 : maxBytes }] }],
        forgottenTopicsData: [],
      },
      at.leaderId,
    );
    const p = res.responses[0]?.partitions[0];
    const errorCode = res.errorCode !== ErrorCode.NONE ? res.errorCode : (p?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR);
    if (p === undefined || errorCode !== ErrorCode.NONE) {
      if (!narrow && errorCode !== ErrorCode.NONE) {
        narrow = true;
        continue;
      }
      yield { failedAt: position, errorCode };
      return;
    }
    const chunk: BatchSummary[] = [];
    let pastEnd = false;
    let corrupt = false;
    try {
      pastEnd = summarize(p.records, position, to, chunk);
    } catch (e) {
      // A batch size no batch can have (DecodeError): the bytes served from here on are corrupt.
      if (!(e instanceof DecodeError)) throw e;
      corrupt = true;
    }
    for (const b of chunk) yield b;
    const last = chunk[chunk.length - 1];
    if (last !== undefined) position = last.lastOffset + 1;
    if (corrupt) {
      yield { failedAt: position, errorCode: ErrorCode.CORRUPT_MESSAGE };
      return;
    }
    if (pastEnd) return;
    if (last === undefined) {
      // Nothing whole came back below `to`: the log ends early here.
      yield { failedAt: position, errorCode: ErrorCode.NONE };
      return;
    }
  }
}

/**
 * The whole batches of one Fetch answer that end at or after `position`, appended to `out`.
 * Answers true when a batch starting at or after `to` was reached.
 */
function summarize(records: Buffer | null, position: number, to: number, out: BatchSummary[]): boolean {
  if (records === null) return false;
  // A partial batch at the end of the response is left for the next Fetch.
  for (const batch of iterateBatches(records)) {
    if (batch.baseOffset >= to) return true;
    const start = batch.offset;
    const end = start + batch.sizeInBytes;
    const lastOffset = batch.baseOffset + batch.lastOffsetDelta;
    if (lastOffset < position) continue;
    out.push({
      baseOffset: batch.baseOffset,
      lastOffset,
      partitionLeaderEpoch: batch.partitionLeaderEpoch,
      recordsCount: records.readInt32BE(start + BATCH.RECORDS_COUNT),
      isControl: batch.isControl,
      firstTimestamp: Number(records.readBigInt64BE(start + BATCH.BASE_TIMESTAMP)),
      maxTimestamp: Number(records.readBigInt64BE(start + BATCH.MAX_TIMESTAMP)),
      hash: xxh64(records.subarray(start, end)),
      crcOk: crc32c(records.subarray(start + BATCH.ATTRIBUTES, end)) === batch.crc,
    });
  }
  return false;
}

export const isFailure = (x: BatchSummary | ReadFailure): x is ReadFailure => 'failedAt' in x;
