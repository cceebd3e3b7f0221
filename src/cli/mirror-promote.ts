/**
 * The long-running operator commands of `fjord cluster-mirrors`, on the progress of
 * ./mirror-progress.ts:
 *
 *  - `--describe --watch`: the describe table with a progress line per mirror, redrawn every
 *    interval until interrupted (Ctrl-C ends it with exit code 0);
 *  - `--start --wait`: progress until every partition of the started topics is MIRRORING with
 *    lag 0, or the timeout (exit 1);
 *  - `--promote`: a graceful failover. It waits until every partition of the topics is MIRRORING
 *    with lag 0, saying whether the source was still taking writes at that point (records written
 *    there afterwards are not mirrored) or had gone quiet, then stops the topics; the stop itself
 *    syncs group offsets a last time before the fetcher is removed (STOPPING, KIP-1279 §8.5), and
 *    the command waits until every partition is STOPPED and writable. It refuses, changing
 *    nothing, when a partition is not MIRRORING (paused, failed): lag would never reach 0.
 */
import type { MirrorAdmin } from '../admin/mirror-admin.js';
import { Exit } from './cli-common.js';
import { describeTable, progressLine, ProgressTracker, Screen, type CliIo, type MirrorRow } from './mirror-progress.js';

const POLL_MS = 500;

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function screenOf(io: CliIo): Screen {
  const write = io.write ?? ((t: string) => t.replace(/\n$/, '').split('\n').forEach((l) => io.out(l)));
  return new Screen(write, io.isTTY === true);
}

/** An AbortSignal for Ctrl-C / SIGTERM when the caller gave none. */
function interruptSignal(io: CliIo): { signal: AbortSignal; dispose: () => void } {
  if (io.signal !== undefined) return { signal: io.signal, dispose: () => undefined };
  const ac = new AbortController();
  const stop = (): void => ac.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: ac.signal,
    dispose: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

/** `--describe --watch`. */
export async function watch(admin: MirrorAdmin, names: readonly string[], failedOnly: boolean, intervalMs: number, io: CliIo): Promise<number> {
  const tracker = new ProgressTracker(admin);
  const screen = screenOf(io);
  const { signal, dispose } = interruptSignal(io);
  try {
    while (!signal.aborted) {
      const { rows, progress } = await tracker.sample(names);
      const shown = failedOnly ? rows.filter((r) => r.state === 'FAILED') : rows;
      screen.draw([`Every ${intervalMs / 1000}s  ${new Date().toISOString()}  (Ctrl-C to quit)`, '', ...progress.map(progressLine), '', ...describeTable(shown, failedOnly)]);
      await sleep(intervalMs, signal);
    }
    return Exit.OK;
  } finally {
    dispose();
  }
}

const caughtUp = (rows: readonly MirrorRow[]): boolean => rows.length > 0 && rows.every((r) => r.state === 'MIRRORING' && r.lag === 0);

/** Polls with progress until `done(rows)`, a refusal, or the timeout. */
async function waitWithProgress(
  admin: MirrorAdmin,
  mirror: string,
  topics: ReadonlySet<string>,
  timeoutS: number,
  io: CliIo,
  done: (rows: readonly MirrorRow[]) => boolean,
  refuse: (rows: readonly MirrorRow[]) => string | null = () => null,
): Promise<{ ok: true; rows: readonly MirrorRow[]; sourceQuiet: boolean } | { ok: false; why: string }> {
  const tracker = new ProgressTracker(admin);
  const screen = screenOf(io);
  const until = Date.now() + timeoutS * 1000;
  let lastSource = -1;
  let quietPolls = 0;
  let lastLine = '';
  // Three samples at least, so "the source stopped taking writes" rests on two unchanged ends.
  let samples = 0;
  for (;;) {
    samples++;
    const { rows, progress } = await tracker.sample([mirror], (r) => topics.has(r.topic));
    const sourceEnd = rows.reduce((n, r) => n + Math.max(0, r.sourceOffset), 0);
    quietPolls = sourceEnd === lastSource ? quietPolls + 1 : 0;
    lastSource = sourceEnd;
    const line = progress.map(progressLine).join('\n');
    // On a terminal the line is redrawn each poll; elsewhere printed when it changes.
    if (io.isTTY === true || line !== lastLine) screen.draw([line]);
    lastLine = line;
    if (done(rows) && (samples >= 3 || quietPolls >= 2)) return { ok: true, rows, sourceQuiet: quietPolls >= 2 };
    const refused = refuse(rows);
    if (refused !== null) return { ok: false, why: refused };
    if (Date.now() > until) {
      const left = rows.reduce((n, r) => n + Math.max(0, r.lag), 0);
      const states = [...new Set(rows.map((r) => r.state))].join(', ');
      return { ok: false, why: `timed out after ${timeoutS} s: ${left} records still to mirror (states: ${states || 'none yet'})` };
    }
    await sleep(POLL_MS);
  }
}

/** `--start --wait`. */
export async function waitUntilMirrored(admin: MirrorAdmin, mirror: string, topics: readonly string[], timeoutS: number, io: CliIo): Promise<number> {
  const set = new Set(topics);
  const r = await waitWithProgress(admin, mirror, set, timeoutS, io, caughtUp);
  if (!r.ok) {
    io.err(`Error: ${r.why}`);
    return Exit.KAFKA_ERROR;
  }
  io.out(`Caught up: ${r.rows.length} partitions of ${topics.length} topics are MIRRORING with lag 0.`);
  return Exit.OK;
}

/** `--promote`. */
export async function promote(admin: MirrorAdmin, mirror: string, topics: readonly string[], timeoutS: number, io: CliIo): Promise<number> {
  const set = new Set(topics);
  io.out(`Promoting ${topics.join(', ')} of mirror ${mirror}: waiting up to ${timeoutS} s for lag 0 on every partition.`);
  const notMirroring = (rows: readonly MirrorRow[]): string | null => {
    const bad = rows.find((r) => r.state !== 'MIRRORING' && r.state !== 'LOG_TRUNCATION' && r.state !== 'EPOCH_FENCING');
    return bad === undefined ? null : `${bad.topic}-${bad.partition} is ${bad.state}${bad.errorMessage ? ` (${bad.errorMessage})` : ''}; lag cannot reach 0, nothing was stopped`;
  };
  const caught = await waitWithProgress(admin, mirror, set, timeoutS, io, caughtUp, notMirroring);
  if (!caught.ok) {
    io.err(`Error: ${caught.why}`);
    return Exit.KAFKA_ERROR;
  }
  io.out(
    caught.sourceQuiet
      ? `Caught up: lag 0 on ${caught.rows.length} partitions; the source had stopped taking writes, nothing is left behind.`
      : `Caught up: lag 0 on ${caught.rows.length} partitions while the source was still taking writes; records written there from now on are not mirrored.`,
  );
  const ends = new Map(caught.rows.map((r) => [`${r.topic}-${r.partition}`, r.destinationOffset]));
  await admin.stopMirrorTopics(mirror, topics);
  const stopped = await waitWithProgress(admin, mirror, set, timeoutS, io, (rows) => rows.length > 0 && rows.every((r) => r.state === 'STOPPED'));
  if (!stopped.ok) {
    io.err(`Error: the stop did not finish: ${stopped.why}`);
    return Exit.KAFKA_ERROR;
  }
  const cfg = await admin.describeMirrorConfig(mirror).catch(() => []);
  const groupsSynced = cfg.find((c) => c.name === 'mirror.groups.sync.enabled')?.value !== 'false';
  for (const t of topics) {
    const parts = stopped.rows.filter((r) => r.topic === t).map((r) => `${r.partition}@${ends.get(`${t}-${r.partition}`) ?? '-'}`);
    io.out(`Promoted topic ${t}: STOPPED and writable here; mirrored up to partition@offset ${parts.join(' ')}; ${groupsSynced ? 'group offsets synced at the stop' : 'group offsets not synced (mirror.groups.sync.enabled=false)'}.`);
  }
  return Exit.OK;
}
