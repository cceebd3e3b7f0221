/** A long-running child (a broker) whose output goes to a log file, stopped with SIGTERM. */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { tail } from './run.js';

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

export class ManagedProcess {
  private readonly child: ChildProcess;
  private exitInfo: string | null = null;
  private readonly exited: Promise<void>;

  constructor(
    readonly label: string,
    cmd: string,
    args: readonly string[],
    readonly logFile: string,
    opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
  ) {
    const fd = openSync(logFile, 'a');
    this.child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    live.add(this.child);
    this.exited = new Promise((resolvePromise) => {
      this.child.once('exit', (code, signal) => {
        live.delete(this.child);
        this.exitInfo = `${label} exited (code ${code}, signal ${signal})`;
        resolvePromise();
      });
      this.child.once('error', (e) => {
        live.delete(this.child);
        this.exitInfo = `${label} could not start: ${e.message}`;
        resolvePromise();
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** null while running; otherwise why it is gone, with the end of its log. */
  deadReason(): string | null {
    if (this.exitInfo === null) return null;
    return `${this.exitInfo}\n--- ${this.logFile} ---\n${this.logTail()}`;
  }

  logTail(lines = 40): string {
    try {
      return tail(readFileSync(this.logFile, 'utf8'), lines);
    } catch {
      return '(no log)';
    }
  }

  /** SIGTERM, then SIGKILL if the process has not exited after `graceMs`. */
  async stop(graceMs = 20_000): Promise<void> {
    if (this.exitInfo !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
