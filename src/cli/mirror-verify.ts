/**
 * `fjord cluster-mirrors --verify --mirror M [--topics T]`: checks that the destination holds the
 * source's batches byte for byte (KIP-1279 §9.1 I1: same offsets, same bytes) over the range both
 * hold, without reading either log into memory. Per partition both logs are walked side by side
 * in bounded Fetch chunks (./mirror-verify-reader.ts) and each batch is compared by its offsets
 * and an xxhash64 of its bytes; the first batch that differs names the first differing offset.
 * Each batch's CRC-32C is checked as well, to say which side holds the damaged copy.
 *
 * The range compared is [max of the log starts, min of the high watermarks): the destination may
 * trail (lag) and either side may have moved its log start. A STOPPED partition takes writes of
 * its own since the stop, which begin with the stop's control batches (ABORT markers, then
 * MIRROR_PID_RESET) in the destination's own, higher leader epoch (§8.5): its comparison ends
 * there, and what was mirrored before is compared.
 *
 * Exit codes: 0 every compared partition is identical, 1 a difference or a Kafka error.
 */
import { MirrorAdminError, type MirrorAdmin } from '../admin/mirror-admin.js';
import type { KafkaClient } from '../client/kafka-client.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { errorName, Exit } from './cli-common.js';
import type { CliIo } from './mirror-progress.js';
import { isFailure, locatePartitions, offsetRange, readBatches, type BatchSummary, type PartitionLocation, type ReadFailure } from './mirror-verify-reader.js';

/** What one partition's walk found. */
type Outcome =
  | { readonly identical: true; readonly batches: number; readonly ownFrom?: number }
  | { readonly identical: false; readonly at: number; readonly why: string };

/** Verifies the partitions of `mirror` whose topic `wanted` takes (describe lists STOPPED ones too). */
export async function verifyMirror(admin: MirrorAdmin, destination: KafkaClient, source: KafkaClient, mirror: string, wanted: (topic: string) => boolean, io: CliIo): Promise<number> {
  const mirrors = await admin.describeClusterMirrors([mirror]);
  const bad = mirrors.find((m) => m.errorCode !== ErrorCode.NONE);
  if (bad !== undefined) throw new MirrorAdminError(bad.errorCode, `mirror ${bad.mirrorName}`);
  const described = mirrors.flatMap((m) => m.partitions).filter((p) => wanted(p.topic));
  if (described.length === 0) {
    io.err(`No partition of mirror ${mirror} to verify.`);
    return Exit.KAFKA_ERROR;
  }
  const names = [...new Set(described.map((p) => p.topic))];
  const [here, there] = await Promise.all([locatePartitions(destination, names), locatePartitions(source, names)]);
  let compared = 0;
  let differ = 0;
  let batches = 0;
  for (const p of described) {
    const where = `${p.topic}-${p.partition}`;
    const dst = here.get(where);
    const src = there.get(where);
    compared++;
    if (dst === undefined || src === undefined) {
      differ++;
      io.out(`${where}: not found on the ${dst === undefined ? 'destination' : 'source'}; not compared.`);
      continue;
    }
    if (dst.topicId !== src.topicId) {
      differ++;
      io.out(`${where}: the topic ids differ (source ${src.topicId}, destination ${dst.topicId}); not the same topic.`);
      continue;
    }
    const [a, b] = await Promise.all([offsetRange(source, src), offsetRange(destination, dst)]);
    const from = Math.max(a.logStart, b.logStart);
    const to = Math.min(a.highWatermark, b.highWatermark);
    if (from >= to) {
      io.out(`${where}: nothing to compare (source ${a.logStart}..${a.highWatermark - 1}, destination ${b.logStart}..${b.highWatermark - 1}).`);
      continue;
    }
    const r = await comparePartition(source, src, destination, dst, from, to, p.state === 'STOPPED');
    const range = `offsets ${from}..${to - 1}`;
    if (r.identical) {
      batches += r.batches;
      io.out(
        r.ownFrom === undefined
          ? `${where}: ${range} identical (${r.batches} batches).`
          : `${where}: ${range}: identical up to offset ${r.ownFrom - 1} (${r.batches} batches); from offset ${r.ownFrom} on, this cluster's own writes since the stop.`,
      );
    } else {
      differ++;
      io.out(`${where}: ${range}: first difference at offset ${r.at}: ${r.why}.`);
    }
  }
  if (differ > 0) {
    io.err(`Error: ${differ} of ${compared} partitions of mirror ${mirror} differ from the source.`);
    return Exit.KAFKA_ERROR;
  }
  io.out(`Verified ${compared} partitions of mirror ${mirror} (${batches} batches): identical to the source.`);
  return Exit.OK;
}

function unreadable(side: string, f: ReadFailure): string {
  return f.errorCode === 0 ? `the ${side} returned no whole batch there` : `the ${side} answered ${errorName(f.errorCode)} reading it`;
}

function crcNote(s: BatchSummary, d: BatchSummary): string {
  if (!d.crcOk && s.crcOk) return 'the destination batch fails its CRC-32C check';
  if (!s.crcOk && d.crcOk) return 'the source batch fails its CRC-32C check';
  if (!s.crcOk) return 'both batches fail their CRC-32C checks';
  return 'both pass their CRC-32C checks';
}

/** Walks both logs over [from, to) in lockstep; the first batch that differs ends the walk. */
async function comparePartition(source: KafkaClient, src: PartitionLocation, destination: KafkaClient, dst: PartitionLocation, from: number, to: number, stopped: boolean): Promise<Outcome> {
  const left = readBatches(source, src, from, to);
  const right = readBatches(destination, dst, from, to);
  let batches = 0;
  let position = from;
  try {
    for (;;) {
      const [x, y] = await Promise.all([left.next(), right.next()]);
      if (x.done === true && y.done === true) return { identical: true, batches };
      if (x.done !== true && isFailure(x.value)) return { identical: false, at: x.value.failedAt, why: unreadable('source', x.value) };
      if (y.done !== true && isFailure(y.value)) return { identical: false, at: y.value.failedAt, why: unreadable('destination', y.value) };
      // A stopped partition's own history starts with a control batch of the stop in an epoch
      // the source did not write at that offset: the mirrored range ends there.
      const own = y.done !== true && !isFailure(y.value) && stopped && y.value.isControl && y.value.crcOk ? y.value : null;
      if (own !== null && (x.done === true || (x.value as BatchSummary).partitionLeaderEpoch !== own.partitionLeaderEpoch)) {
        return { identical: true, batches, ownFrom: own.baseOffset };
      }
      if (x.done === true || y.done === true) {
        const extra = (x.done === true ? y.value : x.value) as BatchSummary;
        return { identical: false, at: Math.max(position, extra.baseOffset), why: `only the ${x.done === true ? 'destination' : 'source'} has the batch at offsets ${extra.baseOffset}..${extra.lastOffset}` };
      }
      const s = x.value as BatchSummary;
      const d = y.value as BatchSummary;
      if (s.baseOffset !== d.baseOffset || s.lastOffset !== d.lastOffset) {
        return { identical: false, at: Math.max(position, Math.min(s.baseOffset, d.baseOffset)), why: `the batches differ in their offsets (source ${s.baseOffset}..${s.lastOffset}, destination ${d.baseOffset}..${d.lastOffset})` };
      }
      if (s.hash !== d.hash) return { identical: false, at: Math.max(position, s.baseOffset), why: `the batch at offsets ${s.baseOffset}..${s.lastOffset} differs in its bytes (${crcNote(s, d)})` };
      batches++;
      position = s.lastOffset + 1;
    }
  } finally {
    await Promise.all([left.return(undefined), right.return(undefined)]);
  }
}
