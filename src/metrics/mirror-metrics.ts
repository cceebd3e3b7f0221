/**
 * Cluster mirroring metrics (KIP-1279 §13: MirrorMetadataManager's per-state partition counts and
 * *SyncError counts, the fetcher manager's lag), under `fjord_mirror_*`.
 *
 * Partition states, offsets and lag are DescribeClusterMirrors' (cluster-reads.ts), read at
 * scrape time, so a gauge says 0 exactly when `fjord cluster-mirrors --describe` says lag 0.
 * Fetch counts, fetched bytes, the last fetch time and the newest fetched batch timestamp come
 * from the `fjord:mirror-fetch` channel; sync failures from `fjord:mirror-sync-error`.
 *
 * Time lag: 0 when the partition is caught up (lag 0); otherwise the age of the newest batch
 * fetched from the source (its MaxTimestamp), i.e. how far back in the source's time the mirror
 * stands; absent until a first batch is fetched.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { MetadataImage } from '../controller/metadata-image.js';
import { lastMaxTimestamp } from './batch-headers.js';
import { CHANNEL, MIRROR_SYNC_KINDS, subscribe, type MirrorFetchMessage, type MirrorSyncErrorMessage } from './channels.js';
import type { MirrorPartitionStatus, MirrorStatus } from './cluster-reads.js';

/** The partition states of spec §7.1, each with a count series even when 0 (alerts need the 0). */
export const MIRROR_STATES = ['LOG_TRUNCATION', 'EPOCH_FENCING', 'MIRRORING', 'PAUSING', 'PAUSED', 'STOPPING', 'STOPPED', 'FAILED', 'UNKNOWN'] as const;

interface FetchProgress {
  lastFetchAt: number;
  newestBatchTimestamp: number;
}

export class MirrorMetrics {
  private readonly lagRecords: Gauge<'mirror' | 'topic' | 'partition'>;
  private readonly lagSeconds: Gauge<'mirror' | 'topic' | 'partition'>;
  private readonly sourceOffset: Gauge<'mirror' | 'topic' | 'partition'>;
  private readonly destinationOffset: Gauge<'mirror' | 'topic' | 'partition'>;
  private readonly fetchAge: Gauge<'mirror' | 'topic' | 'partition'>;
  private readonly retryAttempt: Gauge<'mirror' | 'topic' | 'partition'>;
  private readonly states: Gauge<'mirror' | 'state'>;
  private readonly fetches: Counter<'mirror' | 'topic' | 'partition'>;
  private readonly fetchBytes: Counter<'mirror' | 'topic' | 'partition'>;
  private readonly syncErrors: Counter<'mirror' | 'kind'>;
  private readonly progress = new Map<string, FetchProgress>();
  private readonly unsubscribe: (() => void)[];

  constructor(
    register: Registry,
    private readonly image: MetadataImage,
    private readonly now: () => number = Date.now,
  ) {
    const labels = ['mirror', 'topic', 'partition'] as const;
    const gauge = (name: string, help: string): Gauge<'mirror' | 'topic' | 'partition'> => new Gauge({ name, help, labelNames: labels, registers: [register] });
    const counter = (name: string, help: string): Counter<'mirror' | 'topic' | 'partition'> => new Counter({ name, help, labelNames: labels, registers: [register] });
    this.lagRecords = gauge('fjord_mirror_partition_lag_records', 'Offsets the mirror partition is behind the source high watermark (DescribeClusterMirrors Lag).');
    this.lagSeconds = gauge('fjord_mirror_partition_lag_seconds', 'Seconds of source time the mirror partition is behind: 0 when caught up, else the age of the newest batch fetched.');
    this.sourceOffset = gauge('fjord_mirror_partition_source_offset', 'Source high watermark last seen by the mirror fetcher.');
    this.destinationOffset = gauge('fjord_mirror_partition_destination_offset', 'High watermark of the mirror partition here.');
    this.fetchAge = gauge('fjord_mirror_partition_last_fetch_age_seconds', 'Seconds since the last successful fetch of the partition from the source.');
    this.retryAttempt = gauge('fjord_mirror_partition_failed_retry_attempt', 'Retry attempt of a FAILED partition (negative when the failure is not retryable).');
    this.states = new Gauge({ name: 'fjord_mirror_partitions', help: 'Mirror partitions led here, per state (KIP-1279 §7.1).', labelNames: ['mirror', 'state'], registers: [register] });
    this.fetches = counter('fjord_mirror_fetches_total', 'Successful partition fetches from the source.');
    this.fetchBytes = counter('fjord_mirror_fetch_bytes_total', 'Record-batch bytes fetched from the source.');
    this.syncErrors = new Counter({
      name: 'fjord_mirror_sync_errors_total',
      help: 'Failed metadata sync rounds per kind (topic configs, group offsets, ACLs, metadata refresh; KIP-1279 §10).',
      labelNames: ['mirror', 'kind'],
      registers: [register],
    });
    this.unsubscribe = [
      subscribe<MirrorFetchMessage>(CHANNEL.mirrorFetch, (m) => this.onFetch(m)),
      subscribe<MirrorSyncErrorMessage>(CHANNEL.mirrorSyncError, (m) => this.syncErrors.inc({ mirror: m.mirror, kind: m.kind })),
    ];
  }

  private onFetch(m: MirrorFetchMessage): void {
    const mirror = this.image.topic(m.topic)?.mirror?.mirrorName;
    if (mirror === undefined) return;
    const labels = { mirror, topic: m.topic, partition: String(m.partition) };
    const key = `${m.topic}\u0000${m.partition}`;
    let p = this.progress.get(key);
    if (p === undefined) this.progress.set(key, (p = { lastFetchAt: 0, newestBatchTimestamp: -1 }));
    p.lastFetchAt = this.now();
    this.fetches.inc(labels);
    if (m.records !== null && m.records.length > 0) {
      this.fetchBytes.inc(labels, m.records.length);
      const ts = lastMaxTimestamp(m.records);
      if (ts >= 0) p.newestBatchTimestamp = ts;
    }
  }

  /** The time lag of a described partition (see the header), null when not known. */
  timeLagSeconds(p: MirrorPartitionStatus): number | null {
    if (p.lag < 0) return null;
    if (p.lag === 0) return 0;
    const ts = this.progress.get(`${p.topic}\u0000${p.partition}`)?.newestBatchTimestamp ?? -1;
    return ts < 0 ? null : Math.max(0, this.now() - ts) / 1000;
  }

  /** Sets the gauges from a DescribeClusterMirrors snapshot. */
  update(mirrors: readonly MirrorStatus[]): void {
    for (const g of [this.lagRecords, this.lagSeconds, this.sourceOffset, this.destinationOffset, this.fetchAge, this.retryAttempt, this.states]) g.reset();
    const now = this.now();
    for (const m of mirrors) {
      for (const kind of MIRROR_SYNC_KINDS) this.syncErrors.inc({ mirror: m.name, kind }, 0);
      const counts = new Map<string, number>(MIRROR_STATES.map((s) => [s, 0]));
      for (const p of m.partitions) {
        counts.set(p.state, (counts.get(p.state) ?? 0) + 1);
        const labels = { mirror: m.name, topic: p.topic, partition: String(p.partition) };
        if (p.state === 'FAILED') this.retryAttempt.set(labels, p.retryAttempt);
        if (p.lag < 0) continue;
        this.lagRecords.set(labels, p.lag);
        this.sourceOffset.set(labels, p.sourceOffset);
        this.destinationOffset.set(labels, p.destinationOffset);
        const progress = this.progress.get(`${p.topic}\u0000${p.partition}`);
        if (progress !== undefined && progress.lastFetchAt > 0) this.fetchAge.set(labels, (now - progress.lastFetchAt) / 1000);
        const seconds = this.timeLagSeconds(p);
        if (seconds !== null) this.lagSeconds.set(labels, seconds);
      }
      for (const [state, n] of counts) this.states.set({ mirror: m.name, state }, n);
    }
  }

  close(): void {
    for (const u of this.unsubscribe) u();
  }
}
