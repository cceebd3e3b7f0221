/** Runs a child process to completion with a deadline, collecting its output. */
import { spawn } from 'node:child_process';

export interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly ms: number;
}

export interface RunOptions {
  readonly timeoutMs: number;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly input?: string;
}

export function run(cmd: string, args: readonly string[], opts: RunOptions): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
    // The whole process group, so a wrapper's children (a JVM, the test-runner's forks) go too.
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, opts.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        timedOut,
        ms: Date.now() - started,
      });
    });
  });
}

export function tail(text: string, lines = 30): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** The last line of stdout parsed as JSON: how every scenario program reports its observations. */
export function lastJsonLine(r: RunResult): Record<string, unknown> {
  const lines = r.stdout.trim().split('\n');
  const last = lines[lines.length - 1] ?? '';
  try {
    const v: unknown = JSON.parse(last);
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* reported below */
  }
  throw new Error(
    `no JSON result (exit ${r.code}${r.timedOut ? ', timed out' : ''}, ${r.ms} ms)\nstdout:\n${tail(r.stdout)}\nstderr:\n${tail(r.stderr)}`,
  );
}
