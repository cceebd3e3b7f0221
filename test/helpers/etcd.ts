/**
 * Starts a real etcd (Debian's `etcd-server`, /usr/bin/etcd) on free loopback ports with a
 * temporary data directory, and stops it. `restart` keeps the data directory and ports, as an
 * operator restarting etcd would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './node.js';

export interface RunningEtcd {
  readonly endpoint: string;
  readonly dataDir: string;
  /** SIGKILL, then start again on the same ports and data directory. */
  restart(): Promise<void>;
  /** SIGSTOP: etcd keeps its sockets but answers nothing, so no lease is renewed. */
  pause(): void;
  /** SIGCONT after `pause`. */
  resume(): void;
  /** Stops etcd and removes its data directory. */
  destroy(): Promise<void>;
}

async function healthy(endpoint: string, deadline: number, proc: ChildProcess, logs: () => string): Promise<void> {
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`etcd exited with ${proc.exitCode}:\n${logs()}`);
    try {
      const r = await fetch(`${endpoint}/health`);
      if (r.ok && ((await r.json()) as { health?: string }).health === 'true') return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`etcd did not become healthy:\n${logs()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface EtcdOptions {
  /**
   * etcd's --max-txn-ops; by default the value docs/cluster.md asks for (one metadata write of
   * up to Kafka's 10,000 records per request is one transaction). `null`: etcd's own 128.
   */
  readonly maxTxnOps?: number | null;
}

export async function startEtcd(opts: EtcdOptions = {}): Promise<RunningEtcd> {
  const maxTxnOps = opts.maxTxnOps === undefined ? 10240 : opts.maxTxnOps;
  const dataDir = mkdtempSync(join(tmpdir(), 'fjord-etcd-'));
  const clientPort = await freePort();
  const peerPort = await freePort();
  const endpoint = `http://127.0.0.1:${clientPort}`;
  let proc: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let out = '';
  const launch = async (): Promise<void> => {
    const p = spawn(
      '/usr/bin/etcd',
      [
        '--name', 'fjord-test',
        '--data-dir', join(dataDir, 'data'),
        '--listen-client-urls', endpoint,
        '--advertise-client-urls', endpoint,
        '--listen-peer-urls', `http://127.0.0.1:${peerPort}`,
        '--initial-advertise-peer-urls', `http://127.0.0.1:${peerPort}`,
        '--initial-cluster', `fjord-test=http://127.0.0.1:${peerPort}`,
        '--log-level', 'warn',
        ...(maxTxnOps === null ? [] : ['--max-txn-ops', String(maxTxnOps)]),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    p.stderr!.on('data', (d: Buffer) => {
      out = (out + d.toString()).slice(-20_000);
    });
    exited = new Promise((r) => p.once('exit', () => r()));
    proc = p;
    await healthy(endpoint, Date.now() + 30_000, p, () => out);
  };
  const stop = async (): Promise<void> => {
    if (proc && proc.exitCode === null) {
      proc.kill('SIGKILL');
      await exited;
    }
  };
  await launch();
  return {
    endpoint,
    dataDir,
    async restart() {
      await stop();
      await launch();
    },
    pause() {
      proc?.kill('SIGSTOP');
    },
    resume() {
      proc?.kill('SIGCONT');
    },
    async destroy() {
      // A stopped process takes SIGKILL all the same.
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
