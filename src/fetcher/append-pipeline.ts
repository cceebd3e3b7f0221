/**
 * How a fetched partition's data reaches the local log without stopping the fetcher: the batch
 * walk runs as soon as the response arrives, the fetch position moves past the batches at once,
 * and the append is chained behind the partition's earlier appends (`ps.busy`). The loop can
 * then send its next Fetch while the appends of this response are still being written, as
 * Kafka's follower overlaps the network and the log with one fetcher thread per source broker
 * and the log's own append path. `appendAsMirror` still sees every partition's batches in order,
 * each exactly once.
 *
 * Only the plain case takes this path: no error, no DivergingEpoch, no corrupt batch, no epoch
 * above what we know (stale metadata or fencing, §9.4/§9.5), and a first batch at or after the
 * fetch position. Any
 * other response goes whole to `processPartitionResponse` behind the partition's pending appends,
 * and the partition is held out of fetches until it is done, because its outcome decides where,
 * and whether, to fetch next.
 *
 * The plain path keeps everything the one-by-one path keeps: the source's high watermark and log
 * start (followed once the append landed), the last fetch time, the newest mirrored timestamp
 * for time lag, and a cleared link error.
 *
 * Concurrency contract: single event loop. A failed append fails the partition (through
 * `serialize`), which removes it, so the appends queued behind it do not start, the answers to
 * Fetches sent meanwhile are dropped for it (`isCurrent`), and it restarts from its local log
 * end once the state machine re-adds it.
 */
import { channel } from 'node:diagnostics_channel';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { walkFetchedBatches } from '../protocol/fetched-batch-walk.js';
import type { FetcherContext } from './fetcher-context.js';
import { followLogStart, maybeBumpProactively, processPartitionResponse } from './partition-data.js';
import { RecordBatchView } from '../protocol/record-batch.js';
import type { PartitionState } from './partition-state.js';
import type { FetchPartitionResponse } from './source-endpoint.js';

/** The channel partition-data.ts publishes on (src/metrics/channels.ts names it); channels are global by name. */
const mirrorFetchChannel = channel('fjord:mirror-fetch');

interface AppliedResponse {
  /** Settles when this response's append (or slow-path handling) finished; never rejects. */
  readonly done: Promise<void>;
  /** Bytes of the response frame this partition keeps alive until `done`. */
  readonly bytes: number;
}

/** Applies one partition of a Fetch response; returns without waiting for the append. */
export function applyPartitionResponse(ctx: FetcherContext, ps: PartitionState, pr: FetchPartitionResponse): AppliedResponse {
  if (!ctx.isCurrent(ps)) return { done: ps.busy, bytes: 0 };
  const log = pr.errorCode === ErrorCode.NONE && pr.divergingEpoch === null && ps.held === 0 ? ctx.cb.log(ps.tp) : undefined;
  if (log !== undefined) {
    const records = pr.records;
    const dle = ctx.cb.destinationLeaderEpoch(ps.tp);
    const empty = records === null || records.length === 0;
    const run = empty ? null : walkFetchedBatches(records, ps.fetchOffset, ps.sourceLeaderEpoch, dle, ps.maxBytes);
    const plain = run === null || (run.corrupt === null && run.staleEpoch < 0 && run.fencedEpoch < 0 && run.start >= 0 && run.firstBaseOffset >= ps.fetchOffset);
    if (plain) {
      ps.sourceHighWatermark = pr.highWatermark;
      ps.sourceLogStartOffset = pr.logStartOffset;
      ps.lastFetchMs = ctx.clock.now();
      delete ps.lastError;
      if (mirrorFetchChannel.hasSubscribers) mirrorFetchChannel.publish({ topic: ps.tp.topic, partition: ps.tp.partition, records, sourceHighWatermark: pr.highWatermark });
      maybeBumpProactively(ctx, ps, ps.sourceLeaderEpoch, dle);
      if (run === null || records === null) {
        // Nothing to append, but the source's log start may have moved (retention, DeleteRecords).
        if (pr.logStartOffset <= log.logStartOffset) return { done: ps.busy, bytes: 0 };
        return { done: ctx.serialize(ps, () => followLogStart(ctx, ps, log, pr.logStartOffset)), bytes: 0 };
      }
      const slice = records.subarray(run.start, run.end);
      ps.fetchOffset = run.lastOffset + 1;
      ps.lastFetchedEpoch = run.lastEpoch;
      const done = ctx.serialize(ps, async () => {
        if (!ctx.isCurrent(ps)) return;
        const res = await log.appendAsMirror(slice);
        if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, res.errorMessage ?? `appendAsMirror failed with error ${res.errorCode}`);
        if (!ctx.isCurrent(ps)) return;
        ps.mirroredMaxTimestamp = new RecordBatchView(slice, run.lastBatchStart - run.start).maxTimestamp;
        ctx.stats.batchesAppended += run.batches;
        ctx.stats.bytesAppended += slice.length;
        ctx.cb.onProgress?.(ps.tp);
        await followLogStart(ctx, ps, log, pr.logStartOffset);
      });
      maybeBumpProactively(ctx, ps, run.maxEpoch, dle);
      return { done, bytes: slice.length };
    }
  }
  ps.held++;
  const done = ctx.serialize(ps, () => processPartitionResponse(ctx, ps, pr)).finally(() => {
    ps.held--;
    // The outcome may have re-homed the partition to another loop, which skipped it meanwhile.
    if (ps.held === 0 && ctx.isCurrent(ps) && ps.sourceLeaderId >= 0) ctx.ensureLoop(ps.sourceLeaderId).notify();
  });
  return { done, bytes: pr.records?.length ?? 0 };
}
