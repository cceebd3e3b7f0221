/**
 * A Fjord cluster whose members each live in a network namespace of their own, so that links
 * between them can be cut for real: one etcd, N `fjord start` processes and a client namespace
 * where the workloads run.
 *
 *   fjf<tag>-hub:  bridge br0 ── veth ── eth0 of every member namespace
 *   fjf<tag>-etcd  10.231.<tag>.2      etcd
 *   fjf<tag>-n<i>  10.231.<tag>.1<i>   Fjord node i (port 9092)
 *   fjf<tag>-src<i> 10.231.<tag>.5<i>  optional: a Fjord node alone, a source to mirror from
 *   fjf<tag>-cli   10.231.<tag>.100    workloads (test/faults/workload.ts)
 *
 * Addresses exist only inside these namespaces; the root namespace gets none and reaches no
 * member over the network (the test reads the nodes' data directories and logs from disk).
 * Faults: a blackhole route in a member namespace (`cut`, one way or both), the member's link
 * down (`linkDown`), its TCP connections aborted (`resetConnections`), SIGSTOP (`pause`).
 * `destroy` kills every process and deletes every namespace (their links and routes go with
 * them); `cleanLeftovers` does the same for a run that crashed before it could.
 *
 * Needs root, iproute2 and /usr/bin/etcd.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt, ROOT } from '../helpers/node.js';

export const FAST_SESSION = { 'broker.session.timeout.ms': 3000, 'broker.heartbeat.interval.ms': 500 } as const;

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function tryIp(...args: string[]): void {
  try {
    ip(...args);
  } catch {
    // Already gone.
  }
}

/** Kills every process still inside the namespaces of `tag` and deletes them. */
export function cleanLeftovers(tag: number): void {
  let names: string[];
  try {
    names = ip('netns', 'list')
      .split('\n')
      .map((l) => l.split(' ')[0] ?? '')
      .filter((n) => n.startsWith(`fjf${tag}-`));
  } catch {
    return;
  }
  for (const ns of names) {
    try {
      for (const pid of ip('netns', 'pids', ns).split('\n').filter((p) => p.trim() !== '')) {
        try {
          process.kill(Number(pid), 'SIGCONT');
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // Exited meanwhile.
        }
      }
    } catch {
      // No pids.
    }
  }
  for (const ns of names) tryIp('netns', 'del', ns);
}

export interface Member {
  readonly name: string;
  readonly ns: string;
  readonly addr: string;
}

export interface NetnsNode extends Member {
  readonly nodeId: number;
  readonly bootstrap: string;
  readonly dataDir: string;
  readonly process: ChildProcess | null;
  logs(): string;
  start(): Promise<void>;
  kill(): Promise<void>;
  pause(): void;
  resume(): void;
}

export interface NetnsCluster {
  readonly tag: number;
  readonly etcd: Member;
  readonly client: Member;
  readonly nodes: readonly NetnsNode[];
  /** Nodes that are each a cluster of their own (no etcd): sources to mirror from. */
  readonly sources: readonly NetnsNode[];
  node(id: number): NetnsNode;
  readonly etcdEndpoint: string;
  readonly bootstrap: string;
  /** Drops packets from `from` to `to` (blackhole route inside `from`'s namespace). */
  cutOneWay(from: Member, to: Member): void;
  /** Both directions. */
  cut(a: Member, b: Member): void;
  /** Removes every cut made so far. */
  healCuts(): void;
  /**
   * Aborts every TCP connection between `a` and `b`, on both ends (`ss -K`), as a stateful
   * firewall or NAT that lost its state does: streams on them fail at once instead of hanging.
   */
  resetConnections(a: Member, b: Member): void;
  linkDown(m: Member): void;
  linkUp(m: Member): void;
  /** Runs a command inside the client namespace (the workloads). */
  spawnClient(args: readonly string[]): ChildProcess;
  destroy(): Promise<void>;
}

export interface NetnsClusterOptions {
  /** 1-250: keeps namespaces and addresses of test files that run side by side apart. */
  readonly tag: number;
  readonly nodes: number;
  /** Single Fjord nodes, each a cluster of its own, beside the cluster (`fjf<tag>-src<i>`, 10.231.<tag>.5<i>). */
  readonly sources?: number;
  readonly overrides?: Record<string, string | number | boolean>;
  /** Per node: a log dir to use instead of a fresh temp dir (e.g. a small tmpfs). */
  readonly logDir?: (nodeId: number) => string | undefined;
  /** Per node: environment added to the process's (e.g. a fake wall clock). */
  readonly env?: (nodeId: number) => Record<string, string> | undefined;
  /** Per node: arguments to its `node` process before the script (e.g. `--import` of a preload). */
  readonly nodeArgs?: (nodeId: number) => readonly string[] | undefined;
}

function member(tag: number, name: string, host: number): Member {
  return { name, ns: `fjf${tag}-${name}`, addr: `10.231.${tag}.${host}` };
}

function addMember(hub: string, m: Member): void {
  ip('netns', 'add', m.ns);
  ip('-n', m.ns, 'link', 'set', 'lo', 'up');
  ip('-n', hub, 'link', 'add', `v-${m.name}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', m.ns);
  ip('-n', hub, 'link', 'set', `v-${m.name}`, 'master', 'br0', 'up');
  ip('-n', m.ns, 'addr', 'add', `${m.addr}/24`, 'dev', 'eth0');
  ip('-n', m.ns, 'link', 'set', 'eth0', 'up');
}

async function waitFor(what: string, fn: () => boolean | Promise<boolean>, timeoutMs: number, proc?: ChildProcess, logs?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc && proc.exitCode !== null) throw new Error(`${what}: the process exited with ${proc.exitCode}\n${logs?.() ?? ''}`);
    if (await fn()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs?.().slice(-4000) ?? ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startNetnsCluster(opts: NetnsClusterOptions): Promise<NetnsCluster> {
  const tag = opts.tag;
  cleanLeftovers(tag);
  ensureBuilt();
  const hub = `fjf${tag}-hub`;
  const etcd = member(tag, 'etcd', 2);
  const client = member(tag, 'cli', 100);
  const procs = new Set<ChildProcess>();
  const routes: { ns: string; addr: string }[] = [];
  const tmp = mkdtempSync(join(tmpdir(), `fjord-faults-${tag}-`));
  const etcdEndpoint = `http://${etcd.addr}:2379`;
  const spawnIn = (ns: string, args: readonly string[], env?: Record<string, string>): ChildProcess => {
    const p = spawn('ip', ['netns', 'exec', ns, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...(env ? { env: { ...process.env, ...env } } : {}) });
    procs.add(p);
    p.once('exit', () => procs.delete(p));
    return p;
  };
  const keptNodes: NetnsNode[] = [];
  const destroy = async (): Promise<void> => {
    for (const p of procs) {
      p.kill('SIGCONT');
      p.kill('SIGKILL');
    }
    await new Promise((r) => setTimeout(r, 100));
    cleanLeftovers(tag);
    if (process.env.FJORD_FAULTS_KEEP === '1') {
      // Kept for a look afterwards: data directories, and each node's log beside its directory.
      for (const n of keptNodes) writeFileSync(`${n.dataDir}.log`, n.logs());
      console.log(`fault run kept in ${tmp}`);
    } else {
      rmSync(tmp, { recursive: true, force: true });
    }
  };
  try {
    ip('netns', 'add', hub);
    ip('-n', hub, 'link', 'set', 'lo', 'up');
    ip('-n', hub, 'link', 'add', 'br0', 'type', 'bridge');
    ip('-n', hub, 'link', 'set', 'br0', 'up');
    addMember(hub, etcd);
    addMember(hub, client);
    // Keep each process's last output: enough for a failure message.
    const collect = (p: ChildProcess, sink: { out: string }): void => {
      p.stderr!.on('data', (d: Buffer) => {
        sink.out = (sink.out + d.toString()).slice(-2_000_000);
      });
      p.stdout!.resume();
    };
    const etcdSink = { out: '' };
    const etcdProc = spawnIn(etcd.ns, [
      '/usr/bin/etcd',
      '--name', 'fjf',
      '--data-dir', join(tmp, 'etcd'),
      '--listen-client-urls', etcdEndpoint,
      '--advertise-client-urls', etcdEndpoint,
      '--listen-peer-urls', `http://${etcd.addr}:2380`,
      '--initial-advertise-peer-urls', `http://${etcd.addr}:2380`,
      '--initial-cluster', `fjf=http://${etcd.addr}:2380`,
      '--max-txn-ops', '10240',
      '--log-level', 'warn',
    ]);
    collect(etcdProc, etcdSink);
    await waitFor(
      'etcd',
      () => {
        try {
          execFileSync('ip', ['netns', 'exec', client.ns, 'curl', '-sf', '-m', '1', `${etcdEndpoint}/health`], { stdio: 'ignore' });
          return true;
        } catch {
          return false;
        }
      },
      30_000,
      etcdProc,
      () => etcdSink.out,
    );
    /** Node `i` of the cluster, or (`alone`) a node that is a cluster of its own, without etcd. */
    const makeNode = (m: Member, i: number, alone: boolean): NetnsNode => {
      addMember(hub, m);
      const dataDir = (alone ? undefined : opts.logDir?.(i)) ?? join(tmp, alone ? m.name : `node-${i}`);
      const sink = { out: '' };
      let proc: ChildProcess | null = null;
      const node: NetnsNode = {
        ...m,
        nodeId: i,
        bootstrap: `${m.addr}:9092`,
        dataDir,
        get process() {
          return proc;
        },
        logs: () => sink.out,
        async start() {
          if (proc !== null) throw new Error(`${m.name} is running`);
          const overrides: Record<string, string | number | boolean> = {
            'node.id': i,
            listeners: `PLAINTEXT://${m.addr}:9092`,
            'log.dirs': dataDir,
            'group.initial.rebalance.delay.ms': 0,
            ...(alone
              ? {}
              : {
                  'metadata.etcd.endpoints': etcdEndpoint,
                  'auto.leader.rebalance.enable': false,
                  ...FAST_SESSION,
                  ...opts.overrides,
                }),
          };
          const args = ['node', ...((alone ? undefined : opts.nodeArgs?.(i)) ?? []), join(ROOT, 'bin/fjord.js'), 'start'];
          for (const [k, v] of Object.entries(overrides)) args.push('--override', `${k}=${v}`);
          const p = spawnIn(m.ns, args, alone ? undefined : opts.env?.(i));
          proc = p;
          p.once('exit', () => {
            if (proc === p) proc = null;
          });
          collect(p, sink);
          // This process's own start line, not one of an earlier run of the node.
          let started = false;
          let head = '';
          p.stderr!.on('data', (d: Buffer) => {
            if (started) return;
            head = (head + d.toString()).slice(-4096);
            started = head.includes('"msg":"node started"');
          });
          await waitFor(`${m.name} to start`, () => started, 60_000, p, () => sink.out);
        },
        async kill() {
          const p = proc;
          if (p === null) return;
          const exited = new Promise((r) => p.once('exit', r));
          p.kill('SIGCONT');
          p.kill('SIGKILL');
          await exited;
        },
        pause() {
          proc?.kill('SIGSTOP');
        },
        resume() {
          proc?.kill('SIGCONT');
        },
      };
      keptNodes.push(node);
      return node;
    };
    const nodes: NetnsNode[] = [];
    for (let i = 1; i <= opts.nodes; i++) nodes.push(makeNode(member(tag, `n${i}`, 10 + i), i, false));
    const sources: NetnsNode[] = [];
    for (let i = 1; i <= (opts.sources ?? 0); i++) sources.push(makeNode(member(tag, `src${i}`, 50 + i), 1, true));
    for (const n of sources) await n.start();
    // Node 1 founds the cluster; the others adopt its cluster id.
    for (const n of nodes) await n.start();
    const cutOneWay = (from: Member, to: Member): void => {
      ip('-n', from.ns, 'route', 'add', 'blackhole', `${to.addr}/32`);
      routes.push({ ns: from.ns, addr: to.addr });
    };
    return {
      tag,
      etcd,
      client,
      nodes,
      sources,
      node: (id) => nodes[id - 1]!,
      etcdEndpoint,
      bootstrap: nodes.map((n) => n.bootstrap).join(','),
      cutOneWay,
      cut(a, b) {
        cutOneWay(a, b);
        cutOneWay(b, a);
      },
      healCuts() {
        for (const r of routes.splice(0)) tryIp('-n', r.ns, 'route', 'del', 'blackhole', `${r.addr}/32`);
      },
      resetConnections(a, b) {
        for (const [from, to] of [[a, b], [b, a]] as const) execFileSync('ip', ['netns', 'exec', from.ns, 'ss', '-K', 'dst', to.addr], { stdio: 'ignore' });
      },
      linkDown(m) {
        ip('-n', m.ns, 'link', 'set', 'eth0', 'down');
      },
      linkUp(m) {
        ip('-n', m.ns, 'link', 'set', 'eth0', 'up');
      },
      spawnClient: (args) => spawnIn(client.ns, args),
      destroy,
    };
  } catch (err) {
    await destroy();
    throw err;
  }
}

/** The `.log` segment files of `<dataDir>/<topic>-<partition>/`, by name. */
export function segmentFiles(dataDir: string, topic: string, partition: number): string[] {
  try {
    return readdirSync(join(dataDir, `${topic}-${partition}`))
      .filter((f) => f.endsWith('.log'))
      .sort();
  } catch {
    return [];
  }
}
