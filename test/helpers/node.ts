/**
 * Starts a real Fjord node process (`node bin/fjord.js start`) on a free loopback port with a
 * temporary data directory, the way an operator would, and stops it. `dist/` is rebuilt first
 * when any source file is newer than the last build (once, under a lock, across test workers).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const STAMP = join(ROOT, 'dist', '.build-stamp');
const LOCK = join(ROOT, 'dist', '.build-lock');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestMtime(p));
    else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Records that dist/ was built from the sources as they were at `started` (ms since the epoch). */
export function markBuilt(started: number): void {
  writeFileSync(STAMP, String(started));
  // The stamp's mtime must not be newer than sources edited during the build.
  utimesSync(STAMP, new Date(started), new Date(started));
}

/** dist/ was built from the sources as they are now (no source file is newer than the last build). */
export function isBuilt(): boolean {
  return existsSync(STAMP) && existsSync(join(ROOT, 'dist/cli/main.js')) && statSync(STAMP).mtimeMs >= newestMtime(join(ROOT, 'src'));
}

/** Builds dist/ when stale. tsc emits even when a source file has a type error. */
export function ensureBuilt(): void {
  const fresh = isBuilt;
  if (fresh()) return;
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  for (let i = 0; ; i++) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      if (i > 600) rmSync(LOCK, { recursive: true, force: true });
      sleepSync(200);
      if (fresh()) return;
    }
  }
  try {
    if (fresh()) return;
    const started = Date.now();
    spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'ignore' });
    if (!existsSync(join(ROOT, 'dist/cli/main.js'))) throw new Error('build produced no dist/cli/main.js');
    markBuilt(started);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => res(port));
    });
  });
}

export interface NodeOptions {
  /** Extra `key=value` config overrides. */
  readonly overrides?: Record<string, string | number | boolean>;
  /** Reuse a data directory (restart); a fresh temp dir otherwise. */
  readonly dataDir?: string;
  readonly port?: number;
}

export interface RunningNode {
  readonly port: number;
  readonly dataDir: string;
  readonly bootstrap: string;
  readonly process: ChildProcess;
  /** Everything the node wrote to stderr (its JSON log lines). */
  logs(): string;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
  /** Stops (SIGTERM) and starts again on the same port and data directory. */
  restart(): Promise<RunningNode>;
  /** Stops and removes the data directory. */
  destroy(): Promise<void>;
}

export async function startNode(opts: NodeOptions = {}): Promise<RunningNode> {
  return launch(opts, true);
}

async function launch(opts: NodeOptions, build: boolean): Promise<RunningNode> {
  // A restart runs the same build as the first start: sources edited meanwhile do not count.
  if (build) ensureBuilt();
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'fjord-node-'));
  const port = opts.port ?? (await freePort());
  const overrides: Record<string, string | number | boolean> = {
    'node.id': 1,
    listeners: `PLAINTEXT://127.0.0.1:${port}`,
    'log.dirs': dataDir,
    'group.initial.rebalance.delay.ms': 0,
    ...opts.overrides,
  };
  const args = [join(ROOT, 'bin/fjord.js'), 'start'];
  for (const [k, v] of Object.entries(overrides)) args.push('--override', `${k}=${v}`);
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await new Promise<void>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`node did not start in 30 s:\n${stderr}`)), 30_000);
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes('"msg":"node started"')) {
        clearTimeout(timer);
        res();
      }
    });
    child.stdout!.resume();
    void exited.then((code) => {
      clearTimeout(timer);
      rej(new Error(`node exited with ${code} before starting:\n${stderr}`));
    });
  });
  const node: RunningNode = {
    port,
    dataDir,
    bootstrap: `127.0.0.1:${port}`,
    process: child,
    logs: () => stderr,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
    async restart() {
      await node.stop();
      return launch({ ...opts, dataDir, port }, false);
    },
    async destroy() {
      await node.stop();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return node;
}
