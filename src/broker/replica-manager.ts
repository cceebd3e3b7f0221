/**
 * The partitions this node leads (all of them, in a one-node cluster) and their logs: opened at
 * start from the metadata image, created when topics or partitions appear, closed and deleted
 * when topics are removed, reconfigured when topic configs change. Also runs the periodic log
 * work (retention, time-based flush, producer expiry) and writes Kafka's clean-shutdown marker.
 *
 * Concurrency contract: log lifecycle operations of one partition run one after another
 * (`lifecycle` chain per partition), so a delete racing a re-create of the same topic name
 * cannot interleave. Appends and reads go straight to the PartitionLog, which serializes its own
 * mutations.
 *
 * Durability of log start offsets and recovery points: Kafka's `log-start-offset-checkpoint` and
 * `recovery-point-offset-checkpoint` files in the data dir, read at start and written every
 * second, on close, and at once after DeleteRecords or retention move a log start (a log start
 * inside a segment exists nowhere else on disk, so losing it would resurrect deleted records).
 */
import { existsSync } from 'node:fs';
import { open, readFile, readdir, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { logConfigFromProps, type LogConfig } from '../storage/log-config.js';
import { CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_FILE, RECOVERY_POINT_FILE, parseOffsetCheckpoint } from '../storage/log-manager.js';
import { MirrorPartitionState } from '../mirror/mirror-partition-state.js';
import { PartitionLog } from '../storage/partition-log.js';
import type { ConfigResolver } from './config-resolver.js';
import type { Logger } from '../common/logger.js';
import type { MetadataImage, TopicImage } from '../controller/metadata-image.js';
import type { MetadataRecord } from '../controller/metadata-records.js';
import { METADATA_TOPIC_DIR } from '../controller/metadata-log.js';


export interface Partition {
  readonly topic: TopicImage;
  readonly partition: number;
  readonly log: PartitionLog;
}

const key = (topic: string, partition: number): string => `${topic}-${partition}`;

/**
 * A topic being mirrored (bound and not STOPPED) keeps only source epochs in its epoch cache:
 * its batches arrive with the source's leader epochs, and destination epoch bumps (fencing,
 * proactive) only guard writes. Once STOPPED the node leads it normally: the next bump, or the
 * first leader append (STOPPING's markers), starts the destination epoch at the log end.
 */
export function holdsSourceEpochs(t: TopicImage): boolean {
  return t.mirror !== null && t.mirror.desiredState !== MirrorPartitionState.STOPPED;
}

export class ReplicaManager {
  private readonly logs = new Map<string, PartitionLog>();
  private readonly opening = new Map<string, Promise<PartitionLog | undefined>>();
  private readonly lifecycle = new Map<string, Promise<unknown>>();
  private readonly timers: NodeJS.Timeout[] = [];
  private cleanShutdown = false;
  private closed = false;

  constructor(
    private readonly dataDir: string,
    private readonly image: MetadataImage,
    private readonly configs: ConfigResolver,
    private readonly log: Logger,
    private readonly settings: {
      retentionCheckIntervalMs: number;
      producerIdExpirationMs: number;
      /** log.cleaner.enable */
      cleanerEnabled?: boolean;
      /** log.cleaner.backoff.ms: pause between compaction passes (Kafka 15000). */
      cleanerBackoffMs?: number;
    },
  ) {}

  /** Checkpointed offsets read at start, used once when a partition's log is first opened. */
  private savedRecoveryPoints = new Map<string, number>();
  private savedLogStarts = new Map<string, number>();

  private async readCheckpoint(file: string): Promise<Map<string, number>> {
    try {
      return parseOffsetCheckpoint(await readFile(join(this.dataDir, file), 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
      throw err;
    }
  }

  /**
   * Opens every partition in the image; removes directories of topics that no longer exist.
   * `cleanShutdown` says whether the previous run left the marker (the node removes it first).
   */
  async start(cleanShutdown: boolean): Promise<void> {
    this.cleanShutdown = cleanShutdown;
    this.log.info('opening partition logs', { cleanShutdown: this.cleanShutdown });
    this.savedRecoveryPoints = await this.readCheckpoint(RECOVERY_POINT_FILE);
    this.savedLogStarts = await this.readCheckpoint(LOG_START_OFFSET_FILE);
    const wanted = new Set<string>();
    const opens: Promise<unknown>[] = [];
    for (const t of this.image.topicsByName.values()) {
      for (const p of t.partitions) {
        wanted.add(key(t.name, p.partition));
        opens.push(this.ensureLog(t.name, p.partition));
      }
    }
    await Promise.all(opens);
    for (const e of await readdir(this.dataDir, { withFileTypes: true })) {
      if (!e.isDirectory() || e.name === METADATA_TOPIC_DIR || !/-\d+$/.test(e.name)) continue;
      if (!wanted.has(e.name)) {
        this.log.info('removing log of a deleted topic', { dir: e.name });
        await rm(join(this.dataDir, e.name), { recursive: true, force: true });
      }
    }
    await this.checkpoint();
    // One tick a second drives flush.ms and the checkpoint files; retention and compaction run
    // on their own intervals inside it. A tick never overlaps the previous one.
    let running = false;
    const tick = (): void => {
      if (running || this.closed) return;
      running = true;
      void this.periodic().finally(() => {
        running = false;
      });
    };
    this.timers.push(setInterval(tick, 1000).unref());
  }

  private lastRetention = Date.now();
  private lastClean = 0;
  private async periodic(): Promise<void> {
    const now = Date.now();
    const retention = now - this.lastRetention >= this.settings.retentionCheckIntervalMs;
    if (retention) this.lastRetention = now;
    const clean = (this.settings.cleanerEnabled ?? true) && now - this.lastClean >= (this.settings.cleanerBackoffMs ?? 15_000);
    if (clean) this.lastClean = now;
    for (const [k, l] of this.logs) {
      if (this.closed) return;
      try {
        await l.maybeFlushByTime();
        if (retention) {
          const n = await l.applyRetention();
          if (n > 0) this.log.info('retention deleted segments', { partition: k, segments: n, logStartOffset: l.logStartOffset });
          await l.expireProducers();
        }
        if (clean && l.config.cleanupPolicy.includes('compact')) {
          const st = await l.compact();
          if (st.segmentsCleaned > 0) this.log.info('compacted log', { partition: k, ...st });
        }
      } catch (err) {
        this.log.warn('periodic log work failed', { partition: k, err: err instanceof Error ? err.message : String(err) });
      }
    }
    try {
      if (!this.closed) await this.checkpoint();
    } catch (err) {
      this.log.warn('writing offset checkpoints failed', { err: err instanceof Error ? err.message : String(err) });
    }
  }

  private checkpointing: Promise<void> = Promise.resolve();
  /**
   * Writes both checkpoint files (write to a temp file, fsync, rename) for every open log.
   * Calls are chained so two writers never race on the temp files.
   */
  checkpoint(): Promise<void> {
    const run = this.checkpointing.then(async () => {
      const entries = [...this.logs.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
      const fmt = (f: (l: PartitionLog) => number): string => {
        const lines = entries.map(([k, l]) => {
          const i = k.lastIndexOf('-');
          return `${k.slice(0, i)} ${k.slice(i + 1)} ${f(l)}\n`;
        });
        return `0\n${lines.length}\n${lines.join('')}`;
      };
      await writeDurably(join(this.dataDir, RECOVERY_POINT_FILE), fmt((l) => l.recoveryPoint));
      await writeDurably(join(this.dataDir, LOG_START_OFFSET_FILE), fmt((l) => l.logStartOffset));
    });
    this.checkpointing = run.catch(() => undefined);
    return run;
  }

  logConfigOf(topic: string): LogConfig {
    return logConfigFromProps(this.configs.topicProps(topic));
  }

  /** The open log of a partition, undefined when it is not (yet) open or does not exist. */
  getLog(topic: string, partition: number): PartitionLog | undefined {
    return this.logs.get(key(topic, partition));
  }

  /** The log, opening it when the image has the partition; undefined when the image does not. */
  ensureLog(topic: string, partition: number): Promise<PartitionLog | undefined> {
    const k = key(topic, partition);
    const open = this.logs.get(k);
    if (open) return Promise.resolve(open);
    const pending = this.opening.get(k);
    if (pending) return pending;
    const t = this.image.topic(topic);
    if (!t || !t.partitions[partition] || this.closed) return Promise.resolve(undefined);
    const p = this.serial(k, async () => {
      const existing = this.logs.get(k);
      if (existing) return existing;
      const recoveryPoint = this.savedRecoveryPoints.get(k);
      const logStartOffset = this.savedLogStarts.get(k);
      // A checkpoint entry belongs to the log that was there at start, never to a re-created one.
      this.savedRecoveryPoints.delete(k);
      this.savedLogStarts.delete(k);
      const l = await PartitionLog.open({
        dir: join(this.dataDir, k),
        topicId: t.topicId,
        config: this.logConfigOf(topic),
        cleanShutdown: this.cleanShutdown,
        producerIdExpirationMs: this.settings.producerIdExpirationMs,
        ...(recoveryPoint !== undefined ? { recoveryPoint } : {}),
        ...(logStartOffset !== undefined ? { logStartOffset } : {}),
      });
      const epoch = t.partitions[partition]!.leaderEpoch;
      if (l.latestEpoch < epoch && !holdsSourceEpochs(t)) await l.assignEpochStartOffset(epoch, l.logEndOffset);
      // The topic may have been deleted while the log was opening.
      if (this.image.topic(topic) !== t) {
        await l.deleteLog();
        return undefined;
      }
      this.logs.set(k, l);
      return l;
    }).finally(() => this.opening.delete(k));
    this.opening.set(k, p);
    return p;
  }

  private serial<T>(k: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.lifecycle.get(k) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.lifecycle.set(k, tail);
    void tail.then(() => {
      if (this.lifecycle.get(k) === tail) this.lifecycle.delete(k);
    });
    return run;
  }

  /** Keeps logs in step with applied metadata records. */
  onMetadata(records: readonly MetadataRecord[], removed: ReadonlyMap<string, TopicImage>): void {
    for (const rec of records) {
      switch (rec.type) {
        case 'partition': {
          const t = this.image.topicsById.get(rec.topicId);
          if (t) void this.ensureLog(t.name, rec.partition);
          break;
        }
        case 'removeTopic': {
          const t = removed.get(rec.topicId);
          if (!t) break;
          for (const p of t.partitions) {
            const k = key(t.name, p.partition);
            void this.serial(k, async () => {
              const l = this.logs.get(k);
              if (l && l.topicId === t.topicId) {
                this.logs.delete(k);
                await l.deleteLog();
              } else if (!l) {
                await rm(join(this.dataDir, k), { recursive: true, force: true });
              }
            }).catch((err: unknown) => this.log.warn('deleting partition log failed', { partition: k, err: String(err) }));
          }
          break;
        }
        case 'config':
          this.reconfigure(rec.resourceType === 2 ? rec.resourceName : null);
          break;
        case 'partitionChange': {
          const t = this.image.topicsById.get(rec.topicId);
          const l = t ? this.logs.get(key(t.name, rec.partition)) : undefined;
          if (t && l && rec.leaderEpoch > l.latestEpoch && !holdsSourceEpochs(t)) void l.assignEpochStartOffset(rec.leaderEpoch, l.logEndOffset);
          break;
        }
        default:
          break;
      }
    }
  }

  /** Recomputes LogConfig for one topic, or for all (a broker default changed). */
  private reconfigure(topic: string | null): void {
    for (const t of topic === null ? [...this.image.topicsByName.values()] : [this.image.topic(topic)].filter((x): x is TopicImage => !!x)) {
      let cfg: LogConfig;
      try {
        cfg = this.logConfigOf(t.name);
      } catch (err) {
        this.log.warn('invalid topic config ignored', { topic: t.name, err: String(err) });
        continue;
      }
      for (const p of t.partitions) {
        const l = this.logs.get(key(t.name, p.partition));
        if (l) l.config = cfg;
      }
    }
  }

  /** Every open log with its topic and partition. */
  *partitions(): IterableIterator<Partition> {
    for (const t of this.image.topicsByName.values()) {
      for (const p of t.partitions) {
        const l = this.logs.get(key(t.name, p.partition));
        if (l) yield { topic: t, partition: p.partition, log: l };
      }
    }
  }

  /**
   * Flushes and closes every log. Resolves true when all closed cleanly; the node then writes
   * the clean-shutdown marker once the metadata log is closed too.
   */
  async close(): Promise<boolean> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    await Promise.allSettled([...this.opening.values()]);
    await Promise.allSettled([...this.lifecycle.values()]);
    const results = await Promise.allSettled([...this.logs.values()].map((l) => l.close()));
    try {
      await this.checkpoint();
    } catch (err) {
      this.log.error('writing offset checkpoints failed', { err: err instanceof Error ? err.message : String(err) });
      results.push({ status: 'rejected', reason: err });
    }
    this.logs.clear();
    const failed = results.filter((r) => r.status === 'rejected');
    if (failed.length > 0) {
      this.log.error('some logs did not close cleanly; no clean-shutdown marker', { failed: failed.length });
      return false;
    }
    return true;
  }
}

async function writeDurably(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
}

/** Reads and removes the clean-shutdown marker: true when the previous run shut down cleanly. */
export async function takeCleanShutdownMarker(dataDir: string): Promise<boolean> {
  const marker = join(dataDir, CLEAN_SHUTDOWN_FILE);
  if (!existsSync(marker)) return false;
  await unlink(marker);
  return true;
}

export async function writeCleanShutdownMarker(dataDir: string): Promise<void> {
  await writeFile(join(dataDir, CLEAN_SHUTDOWN_FILE), '');
}
