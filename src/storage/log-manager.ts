import { join } from 'node:path';
import { systemClock, type Clock } from './clock.js';
import { realFileSystem, type FileSystem } from './file-system.js';
import { GroupCommit } from './group-commit.js';
import { DEFAULT_LOG_CONFIG, type LogConfig } from './log-config.js';
import { PartitionLog } from './partition-log.js';

/** Kafka's clean-shutdown marker file in each log dir. */
export const CLEAN_SHUTDOWN_FILE = '.kafka_cleanshutdown';
export const RECOVERY_POINT_FILE = 'recovery-point-offset-checkpoint';
export const LOG_START_OFFSET_FILE = 'log-start-offset-checkpoint';

export interface LogManagerOptions {
  logDirs: readonly string[];
  /** Config of a topic's logs (topic configs over broker defaults); DEFAULT_LOG_CONFIG when absent. */
  configFor?: (topic: string) => LogConfig;
  fs?: FileSystem;
  clock?: Clock;
  /** log.retention.check.interval.ms (Kafka default 300000). */
  retentionCheckIntervalMs?: number;
  /** How often compacted logs are cleaned (log.cleaner.backoff.ms is 15000 in Kafka). */
  cleanerIntervalMs?: number;
  /** How often flush.ms and the checkpoint files are looked at. */
  flushCheckIntervalMs?: number;
  /** Directory names under the log dirs that belong to someone else (the controller's metadata log). */
  isForeignDir?: (name: string) => boolean;
}

export interface PartitionKey {
  readonly topic: string;
  readonly partition: number;
}

/** `<topic>-<partition>` → its parts, or null for a directory that is no partition. */
export function parsePartitionDir(name: string): PartitionKey | null {
  const m = /^(.+)-(\d+)$/.exec(name);
  if (m === null) return null;
  return { topic: m[1] as string, partition: Number(m[2]) };
}

/** Kafka's offset checkpoint file: "0\n<count>\n<topic> <partition> <offset>\n...". */
export function parseOffsetCheckpoint(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const lines = text.split('\n');
  if (lines[0] !== '0') return out;
  const n = Number(lines[1]);
  for (let i = 0; i < n; i++) {
    const parts = (lines[2 + i] ?? '').trim().split(/\s+/);
    if (parts.length !== 3) continue;
    out.set(`${parts[0]}-${parts[1]}`, Number(parts[2]));
  }
  return out;
}

function formatOffsetCheckpoint(entries: [PartitionKey, number][]): string {
  return `0\n${entries.length}\n${entries.map(([k, o]) => `${k.topic} ${k.partition} ${o}\n`).join('')}`;
}

interface Entry {
  readonly key: PartitionKey;
  readonly logDir: string;
  readonly log: PartitionLog;
}

/**
 * All partition logs of a node (Kafka's LogManager): opens every `<topic>-<partition>/` under
 * the log dirs at start (recovering those written after the last clean shutdown), creates and
 * deletes logs, runs retention, compaction and flush.ms timers, keeps Kafka's
 * recovery-point and log-start-offset checkpoint files, and writes the clean-shutdown marker on
 * close. One GroupCommit is shared by every log so acks=all fsyncs are grouped node-wide.
 *
 * Concurrency: methods may be called concurrently; each log serialises its own mutations.
 */
export class LogManager {
  private readonly logs = new Map<string, Entry>();
  private readonly creating = new Map<string, Promise<PartitionLog>>();
  private timers: NodeJS.Timeout[] = [];
  readonly fs: FileSystem;
  readonly clock: Clock;
  readonly groupCommit = new GroupCommit();
  private closed = false;

  private constructor(private readonly opts: LogManagerOptions) {
    this.fs = opts.fs ?? realFileSystem;
    this.clock = opts.clock ?? systemClock;
  }

  static async open(opts: LogManagerOptions): Promise<LogManager> {
    const m = new LogManager(opts);
    await m.loadAll();
    return m;
  }

  private configFor(topic: string): LogConfig {
    return this.opts.configFor?.(topic) ?? DEFAULT_LOG_CONFIG;
  }

  private isForeign(name: string): boolean {
    if (this.opts.isForeignDir !== undefined) return this.opts.isForeignDir(name);
    return name.startsWith('__cluster_metadata');
  }

  private async readCheckpoint(dir: string, file: string): Promise<Map<string, number>> {
    const path = join(dir, file);
    if (!(await this.fs.exists(path))) return new Map();
    return parseOffsetCheckpoint((await this.fs.readFile(path)).toString('utf8'));
  }

  private async loadAll(): Promise<void> {
    for (const logDir of this.opts.logDirs) {
      await this.fs.mkdirp(logDir);
      const marker = join(logDir, CLEAN_SHUTDOWN_FILE);
      const clean = await this.fs.exists(marker);
      const recoveryPoints = await this.readCheckpoint(logDir, RECOVERY_POINT_FILE);
      const logStarts = await this.readCheckpoint(logDir, LOG_START_OFFSET_FILE);
      for (const name of (await this.fs.readdir(logDir)).sort()) {
        if (name.startsWith('.') || this.isForeign(name)) continue;
        const key = parsePartitionDir(name);
        if (key === null) continue;
        const dir = join(logDir, name);
        const metaPath = join(dir, 'partition.metadata');
        if (!(await this.fs.exists(metaPath))) continue;
        const topicId = /topic_id:\s*(\S+)/.exec((await this.fs.readFile(metaPath)).toString('utf8'))?.[1];
        if (topicId === undefined) continue;
        const recoveryPoint = recoveryPoints.get(name);
        const logStartOffset = logStarts.get(name);
        const log = await PartitionLog.open({
          dir,
          topicId,
          config: this.configFor(key.topic),
          fs: this.fs,
          clock: this.clock,
          groupCommit: this.groupCommit,
          cleanShutdown: clean,
          ...(recoveryPoint !== undefined ? { recoveryPoint } : {}),
          ...(logStartOffset !== undefined ? { logStartOffset } : {}),
        });
        this.logs.set(name, { key, logDir, log });
      }
      // The marker only vouches for the shutdown that wrote it.
      if (clean) await this.fs.unlink(marker);
    }
    await this.checkpoint();
  }

  get(topic: string, partition: number): PartitionLog | undefined {
    return this.logs.get(`${topic}-${partition}`)?.log;
  }

  /** Every log with its topic and partition. */
  all(): { topic: string; partition: number; log: PartitionLog }[] {
    return [...this.logs.values()].map((e) => ({ topic: e.key.topic, partition: e.key.partition, log: e.log }));
  }

  /** The partition's log, created (in the log dir holding the fewest partitions) when missing. */
  async getOrCreate(topic: string, partition: number, topicId: string, config?: LogConfig): Promise<PartitionLog> {
    const name = `${topic}-${partition}`;
    const existing = this.logs.get(name);
    if (existing !== undefined) {
      if (existing.log.topicId !== topicId) throw new Error(`${name} exists with topic id ${existing.log.topicId}, not ${topicId}`);
      return existing.log;
    }
    const pending = this.creating.get(name);
    if (pending !== undefined) return pending;
    const p = (async () => {
      const counts = new Map(this.opts.logDirs.map((d) => [d, 0]));
      for (const e of this.logs.values()) counts.set(e.logDir, (counts.get(e.logDir) ?? 0) + 1);
      const logDir = [...counts.entries()].sort((a, b) => a[1] - b[1])[0]?.[0];
      if (logDir === undefined) throw new Error('no log dirs');
      const log = await PartitionLog.open({
        dir: join(logDir, name),
        topicId,
        config: config ?? this.configFor(topic),
        fs: this.fs,
        clock: this.clock,
        groupCommit: this.groupCommit,
        cleanShutdown: true,
      });
      this.logs.set(name, { key: { topic, partition }, logDir, log });
      return log;
    })();
    this.creating.set(name, p);
    try {
      return await p;
    } finally {
      this.creating.delete(name);
    }
  }

  /** Closes and removes a partition's log (topic deletion). */
  async delete(topic: string, partition: number): Promise<void> {
    const name = `${topic}-${partition}`;
    const e = this.logs.get(name);
    if (e === undefined) return;
    this.logs.delete(name);
    await e.log.deleteLog();
  }

  /** Applies a changed topic config to its open logs. */
  updateConfig(topic: string, config: LogConfig): void {
    for (const e of this.logs.values()) if (e.key.topic === topic) e.log.config = config;
  }

  /** Starts the retention, cleaner and flush/checkpoint timers. */
  startTasks(): void {
    const every = (ms: number, fn: () => Promise<unknown>): void => {
      let running = false;
      const t = setInterval(() => {
        if (running || this.closed) return;
        running = true;
        void fn()
          .catch(() => undefined)
          .finally(() => {
            running = false;
          });
      }, ms);
      t.unref();
      this.timers.push(t);
    };
    every(this.opts.retentionCheckIntervalMs ?? 300_000, () => this.runRetention());
    every(this.opts.cleanerIntervalMs ?? 15_000, () => this.runCleaner());
    every(this.opts.flushCheckIntervalMs ?? 1_000, async () => {
      for (const e of this.logs.values()) await e.log.maybeFlushByTime();
      await this.checkpoint();
    });
  }

  /** One retention pass over every log; returns the segments deleted. */
  async runRetention(): Promise<number> {
    let n = 0;
    for (const e of this.logs.values()) {
      n += await e.log.applyRetention();
      await e.log.expireProducers();
    }
    if (n > 0) await this.checkpoint();
    return n;
  }

  /** One compaction pass over the compacted logs. */
  async runCleaner(): Promise<void> {
    for (const e of this.logs.values()) if (e.log.config.cleanupPolicy.includes('compact')) await e.log.compact();
  }

  /** Writes recovery-point-offset-checkpoint and log-start-offset-checkpoint in every log dir. */
  async checkpoint(): Promise<void> {
    for (const logDir of this.opts.logDirs) {
      const mine = [...this.logs.values()].filter((e) => e.logDir === logDir);
      await this.fs.writeFileAtomic(join(logDir, RECOVERY_POINT_FILE), formatOffsetCheckpoint(mine.map((e) => [e.key, e.log.recoveryPoint])));
      await this.fs.writeFileAtomic(join(logDir, LOG_START_OFFSET_FILE), formatOffsetCheckpoint(mine.map((e) => [e.key, e.log.logStartOffset])));
    }
  }

  /** Stops the timers, flushes and closes every log, then marks the shutdown clean. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    let allClean = true;
    for (const e of this.logs.values()) {
      try {
        await e.log.close();
      } catch {
        allClean = false;
      }
    }
    await this.checkpoint();
    if (allClean) {
      for (const logDir of this.opts.logDirs) {
        await this.fs.writeFileAtomic(join(logDir, CLEAN_SHUTDOWN_FILE), '{"version":0,"brokerEpoch":-1}');
      }
    }
  }
}
