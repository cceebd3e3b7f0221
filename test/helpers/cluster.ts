/**
 * A real Fjord cluster for tests: one etcd (test/helpers/etcd.ts) and N `fjord start` processes
 * on loopback, node ids 1..N, each with its own data directory, all pointed at the etcd. Nodes
 * can be killed, stopped (SIGSTOP), resumed and restarted one by one; `destroy` ends everything.
 */
import { rmSync } from 'node:fs';
import { startEtcd, type EtcdOptions, type RunningEtcd } from './etcd.js';
import { freePort, startNode, type RunningNode } from './node.js';

export interface ClusterNode {
  readonly nodeId: number;
  readonly port: number;
  readonly bootstrap: string;
  /** The running process, null after kill/stop until restarted. */
  readonly running: RunningNode | null;
  readonly dataDir: string | undefined;
  logs(): string;
  kill(): Promise<void>;
  stop(): Promise<void>;
  /** Starts the node again on the same port and data directory. */
  start(): Promise<void>;
  pause(): void;
  resume(): void;
}

export interface RunningCluster {
  readonly etcd: RunningEtcd;
  readonly nodes: readonly ClusterNode[];
  node(id: number): ClusterNode;
  /** Bootstrap string of every node. */
  readonly bootstrap: string[];
  destroy(): Promise<void>;
}

export interface ClusterOptions {
  readonly nodes: number;
  readonly overrides?: Record<string, string | number | boolean>;
  /** Per-node extra overrides (e.g. broker.rack, or listeners on the node's port). */
  readonly nodeOverrides?: (nodeId: number, port: number) => Record<string, string | number | boolean>;
  readonly etcd?: EtcdOptions;
}

/** Cluster timings for tests: a short session so losses are seen within seconds. */
export const FAST_SESSION = { 'broker.session.timeout.ms': 3000, 'broker.heartbeat.interval.ms': 500 } as const;

export async function startCluster(opts: ClusterOptions): Promise<RunningCluster> {
  const etcd = await startEtcd(opts.etcd);
  const nodes: ClusterNode[] = [];
  try {
    const ports = await Promise.all(Array.from({ length: opts.nodes }, () => freePort()));
    const made = ports.map((port, i) => clusterNode(i + 1, port, etcd.endpoint, { ...FAST_SESSION, ...opts.overrides, ...opts.nodeOverrides?.(i + 1, port) }));
    nodes.push(...made);
    // One at a time: node 1 founds the cluster (its cluster id is adopted by the others).
    for (const n of made) await n.start();
  } catch (err) {
    for (const n of nodes) await n.kill().catch(() => undefined);
    await etcd.destroy();
    throw err;
  }
  return {
    etcd,
    nodes,
    node: (id) => nodes[id - 1]!,
    bootstrap: nodes.map((n) => n.bootstrap),
    async destroy() {
      for (const n of nodes) {
        n.resume();
        await n.kill().catch(() => undefined);
      }
      for (const n of nodes) if (n.dataDir) rmSync(n.dataDir, { recursive: true, force: true });
      await etcd.destroy();
    },
  };
}

function clusterNode(nodeId: number, port: number, endpoint: string, overrides: Record<string, string | number | boolean>): ClusterNode {
  let running: RunningNode | null = null;
  let dataDir: string | undefined;
  let lastLogs = '';
  const node: ClusterNode = {
    nodeId,
    port,
    bootstrap: `127.0.0.1:${port}`,
    get running() {
      return running;
    },
    get dataDir() {
      return dataDir;
    },
    logs: () => running?.logs() ?? lastLogs,
    async kill() {
      if (!running) return;
      running.process.kill('SIGCONT');
      await running.kill();
      lastLogs = running.logs();
      running = null;
    },
    async stop() {
      if (!running) return;
      await running.stop();
      lastLogs = running.logs();
      running = null;
    },
    async start() {
      if (running) throw new Error(`node ${nodeId} is already running: kill or stop it before starting it again`);
      running = await startNode({ port, ...(dataDir ? { dataDir } : {}), overrides: { 'node.id': nodeId, 'metadata.etcd.endpoints': endpoint, ...overrides } });
      dataDir = running.dataDir;
    },
    pause() {
      running?.process.kill('SIGSTOP');
    },
    resume() {
      running?.process.kill('SIGCONT');
    },
  };
  return node;
}

/**
 * Polls `fn` until it returns a value (null, undefined and false, and errors, count as not yet),
 * failing after the deadline.
 */
export async function eventually<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    try {
      const v = await fn();
      if (v !== null && v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
