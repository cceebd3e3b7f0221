/**
 * What the active controller does beyond serving writes: when brokers come or go (or ask for a
 * controlled shutdown) it reconciles every partition's leader and ISR; with
 * `auto.leader.rebalance.enable` it moves leadership back to preferred replicas every
 * `leader.imbalance.check.interval.seconds` (Kafka's QuorumController periodic task). Only the
 * active controller acts, and its writes are fenced by its election key, so a deposed one cannot.
 *
 * It also snapshots the metadata image into etcd (Kafka's SnapshotGenerator): once
 * `metadata.log.max.record.bytes.between.snapshots` bytes of records were applied since the last
 * snapshot, or `metadata.log.max.snapshot.interval.ms` after it when any record came since. Each
 * snapshot trims the log and compacts etcd's history (etcd-metadata-log.ts).
 */
import type { Logger } from '../common/logger.js';
import type { Controller } from './controller.js';
import type { TopicImage } from './metadata-image.js';
import { electLeaders, reconcileLeadership } from './partition-ops.js';

interface ActiveControllerOptions {
  readonly uncleanAllowed: (topic: TopicImage) => boolean;
  readonly autoLeaderRebalance: boolean;
  readonly imbalanceCheckIntervalMs: number;
  /** metadata.log.max.record.bytes.between.snapshots */
  readonly maxBytesBetweenSnapshots: number;
  /** metadata.log.max.snapshot.interval.ms (0 = no time-based snapshots) */
  readonly maxSnapshotIntervalMs: number;
  readonly log: Logger;
}

/** How often the snapshot thresholds are looked at. */
const SNAPSHOT_CHECK_MS = 1000;

export class ActiveControllerDuties {
  private running = false;
  private dirty = false;
  private timer: NodeJS.Timeout | null = null;
  private snapshotTimer: NodeJS.Timeout | null = null;
  private snapshotting = false;
  private bytesAtSnapshot = 0;
  private lastSnapshotAt = Date.now();
  private readonly unsubscribe: (() => void)[] = [];

  constructor(
    private readonly controller: Controller,
    private readonly opts: ActiveControllerOptions,
  ) {}

  start(): void {
    const cluster = this.controller.cluster;
    this.unsubscribe.push(
      cluster.on('brokers', () => this.schedule()),
      cluster.on('controller', () => this.schedule()),
    );
    if (this.opts.autoLeaderRebalance) this.timer = setInterval(() => void this.rebalance(), this.opts.imbalanceCheckIntervalMs);
    if (this.controller.distributed) this.snapshotTimer = setInterval(() => void this.maybeSnapshot(), SNAPSHOT_CHECK_MS);
    this.schedule();
  }

  private async maybeSnapshot(): Promise<void> {
    const c = this.controller;
    if (this.snapshotting || !c.cluster.isActiveController) return;
    const bytes = c.recordBytes - this.bytesAtSnapshot;
    const interval = this.opts.maxSnapshotIntervalMs;
    const due = bytes >= this.opts.maxBytesBetweenSnapshots || (interval > 0 && bytes > 0 && Date.now() - this.lastSnapshotAt >= interval);
    if (!due) return;
    this.snapshotting = true;
    const bytesNow = c.recordBytes;
    try {
      const offset = c.image.offset;
      if (await c.snapshot()) this.opts.log.info('metadata snapshot written', { offset, recordBytes: bytes });
      this.bytesAtSnapshot = bytesNow;
      this.lastSnapshotAt = Date.now();
    } catch (err) {
      this.opts.log.warn('metadata snapshot failed', { err: String(err) });
    } finally {
      this.snapshotting = false;
    }
  }

  /** One reconcile at a time; changes during one run trigger one more. */
  private schedule(): void {
    if (!this.controller.cluster.isActiveController) return;
    if (this.running) {
      this.dirty = true;
      return;
    }
    this.running = true;
    void (async () => {
      try {
        do {
          this.dirty = false;
          const r = await reconcileLeadership(this.controller, this.opts.uncleanAllowed);
          if (r.errorCode !== 0) this.opts.log.warn('leadership reconcile failed', { errorCode: r.errorCode, err: r.errorMessage ?? '' });
        } while (this.dirty && this.controller.cluster.isActiveController);
      } finally {
        this.running = false;
      }
    })();
  }

  private async rebalance(): Promise<void> {
    if (!this.controller.cluster.isActiveController) return;
    const r = await electLeaders(this.controller, 0, null, true);
    if (Array.isArray(r) && r.length > 0) this.opts.log.info('preferred leaders elected', { partitions: r.length });
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.snapshotTimer) clearInterval(this.snapshotTimer);
    for (const u of this.unsubscribe) u();
  }
}
