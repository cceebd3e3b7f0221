/**
 * Loading and recovery of one partition directory (Kafka's LogLoader), and the producer-state
 * snapshots it starts from: opens the segments, trusts those below the recovery point (or all of
 * them after a clean shutdown) when their indexes check out, scans the rest batch by batch
 * (truncating a torn or corrupt tail and deleting everything after it), rebuilds the
 * leader-epoch cache and producer state from the newest usable snapshot, and collects the
 * aborted transactions.
 *
 * Concurrency contract: `loadLog` runs before the PartitionLog is handed to anyone;
 * `rebuildProducerState` and `takeSnapshot` are called from inside its per-partition queue.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { BATCH, type RecordBatchView } from '../protocol/record-batch.js';
import { scanBatches } from './batch-scan.js';
import type { AbortedTxn } from './indexes.js';
import { LeaderEpochCache } from './leader-epoch-cache.js';
import type { LocalLog } from './local-log.js';
import type { LogSegment } from './log-segment.js';
import type { PartitionLogOptions } from './partition-log-options.js';
import type { ProducerStateManager } from './producer-state.js';
import { controlTypeOf } from '../protocol/control-records.js';
import { deleteSnapshotsOutside, listSnapshotOffsets, snapshotPath } from './snapshot-files.js';

const SNAPSHOTS_TO_KEEP = 3;

interface LoadedLog {
  readonly epochs: LeaderEpochCache;
  readonly logStartOffset: number;
  /** Aborted transactions of the whole log, in marker order. */
  readonly aborted: AbortedTxn[];
}

/**
 * Opens and recovers the directory into `local` and `producers`. Afterwards everything that
 * survived is on disk: the log end is the recovery point (the caller makes it the high watermark).
 */
export async function loadLog(local: LocalLog, producers: ProducerStateManager, topicId: string, opts: PartitionLogOptions): Promise<LoadedLog> {
  const fs = local.fs;
  await fs.mkdirp(local.dir);
  await writePartitionMetadata(local, topicId);
  const names = await fs.readdir(local.dir);
  for (const n of names) {
    if (n.endsWith('.tmp') || n.endsWith('.cleaned')) await fs.unlink(local.path(n));
  }
  const bases = names
    .filter((n) => /^\d{20}\.log$/.test(n))
    .map((n) => Number(n.slice(0, 20)))
    .sort((a, b) => a - b);
  const epochs = await LeaderEpochCache.load(fs, local.path('leader-epoch-checkpoint'));
  if (bases.length === 0) bases.push(opts.logStartOffset ?? 0);
  for (const b of bases) local.segments.push(await local.openSegment(b));

  const clean = opts.cleanShutdown === true;
  const recoverFrom = clean ? local.segments.length : local.segmentIndexFor(opts.recoveryPoint ?? 0);
  const snapLimit = clean ? Number.POSITIVE_INFINITY : (local.segments[recoverFrom]?.baseOffset ?? Number.POSITIVE_INFINITY);
  const snapOffset = await loadLatestSnapshot(local, producers, snapLimit);
  const aborted: AbortedTxn[] = [];
  const maxBatchBytes = Math.max(opts.config.maxMessageBytes, 1 << 20) + BATCH.HEADER_SIZE;

  for (let i = 0; i < local.segments.length; i++) {
    const seg = local.segments[i] as LogSegment;
    if (i < recoverFrom && (await seg.loadClean())) {
      aborted.push(...(await seg.readAbortedTxns()));
      if (seg.nextOffset > snapOffset) await replaySegment(seg, snapOffset, producers);
      continue;
    }
    const found: AbortedTxn[] = [];
    const truncated = await seg.recover(maxBatchBytes, (v) => {
      // Only epochs newer than the cache's latest (Kafka's LogSegment.recover): re-scanning an
      // older segment must not wipe the later entries.
      if (v.partitionLeaderEpoch > epochs.latestEpoch) epochs.assign(v.partitionLeaderEpoch, v.baseOffset);
      if (v.baseOffset >= snapOffset) replayBatch(v, found, producers);
    });
    for (const t of found) await seg.appendAbortedTxn(t);
    aborted.push(...found);
    if (truncated > 0) {
      // Everything after a torn or corrupt batch is unreliable (Kafka deletes the later segments).
      for (const later of local.segments.splice(i + 1)) {
        await later.close();
        await later.deleteFiles();
      }
      break;
    }
  }
  local.logEndOffset = local.active.nextOffset;
  const logStartOffset = Math.max(opts.logStartOffset ?? 0, (local.segments[0] as LogSegment).baseOffset);
  if (logStartOffset > local.logEndOffset) local.logEndOffset = logStartOffset;
  epochs.truncateFromEnd(local.logEndOffset);
  epochs.truncateFromStart(logStartOffset);
  await epochs.flush(true);
  await deleteSnapshotsOutside(fs, local.dir, 0, local.logEndOffset);
  local.recoveryPoint = local.logEndOffset;
  producers.onHighWatermark(local.logEndOffset);
  return { epochs, logStartOffset, aborted };
}

async function writePartitionMetadata(local: LocalLog, topicId: string): Promise<void> {
  const path = local.path('partition.metadata');
  if (await local.fs.exists(path)) {
    const text = (await local.fs.readFile(path)).toString('utf8');
    const m = /topic_id:\s*(\S+)/.exec(text);
    if (m !== null && m[1] !== topicId) throw new KafkaError(ErrorCode.INCONSISTENT_TOPIC_ID, `${path} holds topic id ${m[1]}, expected ${topicId}`);
    if (m !== null) return;
  }
  await local.fs.writeFileAtomic(path, `version: 0\ntopic_id: ${topicId}\n`);
}

/** Loads the newest snapshot at or below `limit`; returns its offset (the log start when none). */
async function loadLatestSnapshot(local: LocalLog, producers: ProducerStateManager, limit: number): Promise<number> {
  const offsets = (await listSnapshotOffsets(local.fs, local.dir)).filter((o) => o <= limit);
  for (let i = offsets.length - 1; i >= 0; i--) {
    const off = offsets[i] as number;
    if (producers.loadSnapshot(await local.fs.readFile(snapshotPath(local.dir, off)))) return off;
  }
  producers.clear();
  return local.segments[0]?.baseOffset ?? 0;
}

/** Applies a replayed batch to producer state, recording aborted transactions. */
function replayBatch(view: RecordBatchView, into: AbortedTxn[], producers: ProducerStateManager): void {
  if (view.producerId < 0 && !view.isControl) return;
  const ctype = view.isControl ? controlTypeOf(view) : -1;
  const completed = producers.replay(view, ctype);
  producers.onHighWatermark(view.lastOffset + 1);
  for (const t of completed) if (t.isAborted) into.push(producers.abortedEntry(t));
}

async function replaySegment(seg: LogSegment, fromOffset: number, producers: ProducerStateManager): Promise<void> {
  const start = fromOffset > seg.baseOffset ? ((await seg.translateOffset(fromOffset))?.position ?? seg.size) : 0;
  const ignored: AbortedTxn[] = [];
  await scanBatches(seg.log, start, seg.size, { full: true }, (v) => {
    if (v.baseOffset >= fromOffset) replayBatch(v, ignored, producers);
  });
}

/** Rebuilds producer state for the log as it now ends (after truncation), from the newest snapshot below it. */
export async function rebuildProducerState(local: LocalLog, producers: ProducerStateManager, highWatermark: number): Promise<void> {
  await deleteSnapshotsOutside(local.fs, local.dir, 0, local.logEndOffset);
  const snapOffset = await loadLatestSnapshot(local, producers, local.logEndOffset);
  for (const seg of local.segments) if (seg.nextOffset > snapOffset) await replaySegment(seg, snapOffset, producers);
  producers.onHighWatermark(highWatermark);
}

/** Writes a producer-state snapshot at `offset`, keeping the newest few (Kafka's takeSnapshot on roll and close). */
export async function takeSnapshot(local: LocalLog, producers: ProducerStateManager, offset: number): Promise<void> {
  await local.fs.writeFileAtomic(snapshotPath(local.dir, offset), producers.encodeSnapshot());
  const all = await listSnapshotOffsets(local.fs, local.dir);
  for (const off of all.slice(0, Math.max(0, all.length - SNAPSHOTS_TO_KEEP))) await local.fs.unlink(snapshotPath(local.dir, off));
}
