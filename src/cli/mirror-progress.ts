/**
 * Catch-up progress of cluster mirrors, for `fjord cluster-mirrors --describe --watch`,
 * `--start --wait` and `--promote`: per mirror the records still to copy (the sum of the
 * partitions' lag), the bytes still to copy (source partition size minus destination partition
 * size, from DescribeLogDirs on both clusters: the destination holds a byte copy), the copy rate
 * measured between two samples, and the time left at that rate.
 *
 * A frame is redrawn in place on a terminal (cursor up over the previous frame, clear to the
 * end); anywhere else each frame is printed after the last, followed by an empty line.
 */
import { MirrorAdmin, type PartitionMirrorDescription } from '../admin/mirror-admin.js';
import { clientOptionsFromConfig } from '../client/client-options.js';

/** Where a command writes. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** Raw output for redrawn frames; `out` line by line when absent. */
  write?(text: string): void;
  /** Redraw in place (stdout is a terminal). */
  readonly isTTY?: boolean;
  /** Ends `--watch` (process signals when absent). */
  readonly signal?: AbortSignal;
}

export interface MirrorRow extends PartitionMirrorDescription {
  readonly mirror: string;
}

interface MirrorProgress {
  readonly mirror: string;
  readonly partitions: number;
  readonly states: ReadonlyMap<string, number>;
  /** Sum of destination offsets over partitions whose source offset is known. */
  readonly recordsDone: number;
  readonly recordsTotal: number;
  readonly recordsRemaining: number;
  /** null when a cluster could not say (no DescribeLogDirs, or unreachable). */
  readonly bytesRemaining: number | null;
  /** Records per second over the last samples; null before there are two. */
  readonly rate: number | null;
  /** Seconds left at that rate; null when unknown, 0 when caught up. */
  readonly etaSeconds: number | null;
}

/** Sizes of a mirror's partitions on its source, through a client built from the mirror's config. */
async function sourceSizes(admin: MirrorAdmin, mirror: string, topics: readonly string[]): Promise<Map<string, number> | null> {
  try {
    const cfg = await admin.describeMirrorConfig(mirror);
    const source = new MirrorAdmin(clientOptionsFromConfig(new Map(cfg.filter((c) => c.value !== null && !c.isDefault).map((c) => [c.name, c.value as string])), `fjord-mirror-${mirror}`));
    try {
      return await source.partitionSizes(topics);
    } finally {
      source.close();
    }
  } catch {
    return null;
  }
}

/** Samples a set of mirrors over time and turns the samples into progress. */
export class ProgressTracker {
  private last: { atMs: number; done: Map<string, number> } | null = null;
  private readonly rates = new Map<string, number>();

  constructor(private readonly admin: MirrorAdmin) {}

  /** One sample: the describe rows (optionally filtered) and the progress of each mirror. */
  async sample(names: readonly string[], keep: (r: MirrorRow) => boolean = () => true): Promise<{ rows: MirrorRow[]; progress: MirrorProgress[] }> {
    const described = await this.admin.describeClusterMirrors(names);
    const rows: MirrorRow[] = [];
    for (const m of described) for (const p of m.partitions) if (keep({ mirror: m.mirrorName, ...p })) rows.push({ mirror: m.mirrorName, ...p });
    const now = Date.now();
    const byMirror = new Map<string, MirrorRow[]>();
    for (const r of rows) {
      let list = byMirror.get(r.mirror);
      if (list === undefined) byMirror.set(r.mirror, (list = []));
      list.push(r);
    }
    const topics = [...new Set(rows.map((r) => r.topic))];
    const destSizes = topics.length > 0 ? await this.admin.partitionSizes(topics).catch(() => null) : new Map<string, number>();
    const progress: MirrorProgress[] = [];
    const done = new Map<string, number>();
    for (const [mirror, list] of byMirror) {
      const src = await sourceSizes(this.admin, mirror, [...new Set(list.map((r) => r.topic))]);
      progress.push(this.progressOf(mirror, list, src, destSizes, now));
      done.set(mirror, progress[progress.length - 1]?.recordsDone ?? 0);
    }
    this.last = { atMs: now, done };
    return { rows, progress };
  }

  private progressOf(mirror: string, rows: readonly MirrorRow[], src: Map<string, number> | null, dest: Map<string, number> | null, now: number): MirrorProgress {
    const states = new Map<string, number>();
    let recordsDone = 0;
    let recordsTotal = 0;
    let recordsRemaining = 0;
    let bytesRemaining: number | null = src !== null && dest !== null ? 0 : null;
    for (const r of rows) {
      states.set(r.state, (states.get(r.state) ?? 0) + 1);
      if (r.sourceOffset >= 0) {
        recordsTotal += r.sourceOffset;
        recordsDone += Math.max(0, r.destinationOffset);
        recordsRemaining += Math.max(0, r.lag);
      }
      if (bytesRemaining !== null && src !== null && dest !== null) {
        const k = `${r.topic}-${r.partition}`;
        bytesRemaining += Math.max(0, (src.get(k) ?? 0) - (dest.get(k) ?? 0));
      }
    }
    let rate: number | null = null;
    const prev = this.last?.done.get(mirror);
    if (this.last !== null && prev !== undefined && now > this.last.atMs) {
      const instant = Math.max(0, recordsDone - prev) / ((now - this.last.atMs) / 1000);
      // Smoothed, so one quiet second does not swing the ETA.
      const before = this.rates.get(mirror);
      rate = before === undefined ? instant : 0.5 * before + 0.5 * instant;
      this.rates.set(mirror, rate);
    }
    const etaSeconds = recordsRemaining === 0 ? 0 : rate !== null && rate > 0 ? recordsRemaining / rate : null;
    return { mirror, partitions: rows.length, states, recordsDone, recordsTotal, recordsRemaining, bytesRemaining, rate, etaSeconds };
  }
}

const BAR_WIDTH = 24;

export function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd());
}

function offset(n: number): string {
  return n < 0 ? '-' : String(n);
}

/** Time lag as a duration, `-` when unknown. */
function timeLag(ms: number): string {
  return ms < 0 ? '-' : ms < 1000 ? `${ms}ms` : formatDuration(ms / 1000);
}

/** How long ago the last good fetch was, `-` when never. */
function fetchAge(ts: number, now: number): string {
  return ts < 0 ? '-' : `${(Math.max(0, now - ts) / 1000).toFixed(1)}s ago`;
}

/**
 * The `--describe` table: TIME-LAG, LAST-FETCH and LINK (ok, or the last error talking to the
 * source) follow the state; `failed` shows RETRY and ERROR instead.
 */
export function describeTable(rows: readonly MirrorRow[], failed: boolean, now = Date.now()): string[] {
  const header = ['MIRROR', 'TOPIC', 'PARTITION', 'SOURCE-OFFSET', 'DESTINATION-OFFSET', 'LAG', 'STATE', 'DESIRED'];
  header.push(...(failed ? ['RETRY', 'ERROR'] : ['TIME-LAG', 'LAST-FETCH', 'LINK']));
  const body = rows.map((r) => {
    const row = [r.mirror, r.topic, r.partition < 0 ? '-' : String(r.partition), offset(r.sourceOffset), offset(r.destinationOffset), offset(r.lag), r.state, r.desiredState ?? '-'];
    if (failed) row.push(r.retryAttempt < 0 ? 'NonRetryable' : String(r.retryAttempt), r.errorMessage ?? '');
    else row.push(timeLag(r.timeLagMs), fetchAge(r.lastFetchTimestamp, now), r.linkError !== null ? `error: ${r.linkError}` : r.lastFetchTimestamp >= 0 ? 'ok' : '-');
    return row;
  });
  return table([header, ...body]);
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i] ?? 'TiB'}`;
}

function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** One line per mirror: bar, percentage, states, what is left, rate and ETA. */
export function progressLine(p: MirrorProgress): string {
  const fraction = p.recordsTotal === 0 ? (p.recordsRemaining === 0 ? 1 : 0) : Math.min(1, p.recordsDone / p.recordsTotal);
  const filled = Math.round(fraction * BAR_WIDTH);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
  const states = [...p.states].map(([s, n]) => `${n} ${s}`).join(', ');
  const bytes = p.bytesRemaining === null ? 'bytes left unknown' : `${formatBytes(p.bytesRemaining)} left`;
  const rate = p.rate === null ? 'rate -' : `${Math.round(p.rate)} records/s`;
  const eta = p.etaSeconds === null ? 'ETA -' : p.etaSeconds === 0 ? 'caught up' : `ETA ${formatDuration(p.etaSeconds)}`;
  return `${p.mirror}  ${bar} ${(fraction * 100).toFixed(1).padStart(5)}%  ${p.recordsRemaining} records left  ${bytes}  ${rate}  ${eta}  (${states})`;
}

/** Where frames go: redrawn in place on a terminal, appended elsewhere. */
export class Screen {
  private previousLines = 0;

  constructor(
    private readonly write: (s: string) => void,
    private readonly tty: boolean,
  ) {}

  draw(lines: readonly string[]): void {
    if (this.tty) {
      // Cursor up over the last frame, clear to the end of the screen, then the new frame.
      const up = this.previousLines > 0 ? `\x1b[${this.previousLines}A\x1b[J` : '';
      this.write(`${up}${lines.join('\n')}\n`);
      this.previousLines = lines.length;
    } else {
      this.write(`${lines.join('\n')}\n\n`);
    }
  }
}
