/**
 * A real delayed IP link between two network namespaces, for benchmarks that need what a
 * high-latency network does to TCP (the sender's window, ACK clocking), which a proxy that
 * terminates TCP cannot show.
 *
 *   fjsrc: fjtun 10.77.0.1 ── delaylink (bench/netns/main.go, one-way delay) ── fjtun 10.77.0.2: fjdst
 *   root:  fjctl-src 10.77.0.5/30 ── veth ── fjctl 10.77.0.6 (fjsrc)
 *          fjctl-dst 10.77.0.9/30 ── veth ── fjctl 10.77.0.10 (fjdst)
 *
 * Traffic between the two namespaces crosses only the TUN pair, so it gets the delay. The veth
 * pairs let the benchmark itself (in the root namespace) reach each node without delay, with a
 * host route to 10.77.0.1 and 10.77.0.2; the root namespace does not forward between them
 * (net.ipv4.ip_forward is left as it is and the benchmark refuses to run when it is on).
 *
 * Needs root, `ip` (iproute2), /dev/net/tun and Go; the Go program is built into
 * .cache/netns/delaylink on first use.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CACHE, ROOT } from '../../test/interop/lib/paths.js';
import { ManagedProcess } from '../../test/interop/lib/process.js';
import { waitServing } from '../../test/interop/lib/net.js';
import { type Broker, type Durability, durabilityProps } from '../compare/brokers.js';

export const SRC_NS = 'fjsrc';
export const DST_NS = 'fjdst';
export const SRC_ADDR = '10.77.0.1';
export const DST_ADDR = '10.77.0.2';
/** Each node listens on this port inside its own namespace (no other process shares it). */
const PORT = 9092;
const BINARY = join(CACHE, 'netns', 'delaylink');

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Removes the veth pairs, the namespaces (their TUN devices go with them) and the host routes. */
export function teardownNamespaces(): void {
  // The root ends of the veth pairs first: a namespace's own devices are released asynchronously
  // after `ip netns del`, so their peers could still be there when the next run adds them again.
  for (const dev of ['fjctl-src', 'fjctl-dst']) {
    try {
      ip('link', 'del', dev);
    } catch {
      // Not there.
    }
  }
  for (const ns of [SRC_NS, DST_NS]) {
    try {
      ip('netns', 'del', ns);
    } catch {
      // Not there: nothing to remove.
    }
  }
  for (const addr of [SRC_ADDR, DST_ADDR]) {
    try {
      ip('route', 'del', `${addr}/32`);
    } catch {
      // Went with its veth.
    }
  }
}

/** Creates both namespaces, the TUN devices (not yet carried) and the control veth pairs. */
export function setupNamespaces(mtu: number): void {
  if (readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim() !== '0') {
    throw new Error('net.ipv4.ip_forward is on: the root namespace would forward between the two nodes, bypassing the delayed link');
  }
  teardownNamespaces();
  const sides = [
    { ns: SRC_NS, addr: SRC_ADDR, peer: DST_ADDR, rootVeth: 'fjctl-src', rootAddr: '10.77.0.5', nsAddr: '10.77.0.6' },
    { ns: DST_NS, addr: DST_ADDR, peer: SRC_ADDR, rootVeth: 'fjctl-dst', rootAddr: '10.77.0.9', nsAddr: '10.77.0.10' },
  ];
  for (const s of sides) {
    ip('netns', 'add', s.ns);
    ip('-n', s.ns, 'link', 'set', 'lo', 'up');
    ip('-n', s.ns, 'tuntap', 'add', 'dev', 'fjtun', 'mode', 'tun');
    ip('-n', s.ns, 'link', 'set', 'fjtun', 'mtu', String(mtu));
    ip('-n', s.ns, 'addr', 'add', s.addr, 'peer', s.peer, 'dev', 'fjtun');
    ip('-n', s.ns, 'link', 'set', 'fjtun', 'up');
    ip('link', 'add', s.rootVeth, 'type', 'veth', 'peer', 'name', 'fjctl', 'netns', s.ns);
    ip('addr', 'add', `${s.rootAddr}/30`, 'dev', s.rootVeth);
    ip('link', 'set', s.rootVeth, 'up');
    ip('-n', s.ns, 'addr', 'add', `${s.nsAddr}/30`, 'dev', 'fjctl');
    ip('-n', s.ns, 'link', 'set', 'fjctl', 'up');
    ip('route', 'add', `${s.addr}/32`, 'via', s.nsAddr);
  }
}

/** Builds bench/netns/ into .cache/netns/delaylink (Go's build cache makes a rebuild quick). */
export function buildDelayLink(): string {
  mkdirSync(join(CACHE, 'netns'), { recursive: true });
  execFileSync('go', ['build', '-o', BINARY, '.'], { cwd: join(ROOT, 'bench/netns'), stdio: ['ignore', 'inherit', 'inherit'] });
  return BINARY;
}

export interface LinkStats {
  readonly direction: string;
  readonly packets: number;
  readonly bytes: number;
  readonly dropped: number;
  readonly connections: number;
  readonly heldP50Ms: number;
  readonly heldP99Ms: number;
}

/** Running links, killed if the benchmark exits without stopping them (their TUN fds would keep the namespaces alive). */
const liveLinks = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of liveLinks) c.kill('SIGKILL');
});

/** One running delaylink between the two namespaces' TUN devices. */
export class DelayLink {
  private constructor(
    private readonly child: ChildProcess,
    private readonly out: string[],
  ) {}

  static async start(delayMs: number, opts: { rateBitsPerSec?: number; limitPackets?: number } = {}): Promise<DelayLink> {
    const args = ['-a', `/var/run/netns/${SRC_NS}`, '-b', `/var/run/netns/${DST_NS}`, '-delay', `${delayMs}ms`];
    if (opts.rateBitsPerSec !== undefined) args.push('-rate', String(opts.rateBitsPerSec));
    if (opts.limitPackets !== undefined) args.push('-limit', String(opts.limitPackets));
    const child = spawn(BINARY, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    liveLinks.add(child);
    child.once('exit', () => liveLinks.delete(child));
    const out: string[] = [];
    let err = '';
    let partial = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s: string) => (err += s));
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (s: string) => {
        partial += s;
        const lines = partial.split('\n');
        partial = lines.pop() ?? '';
        for (const l of lines) {
          if (l.includes('"ready"')) resolve();
          else if (l.trim() !== '') out.push(l);
        }
      });
      child.once('exit', (code) => reject(new Error(`delaylink exited (code ${code}): ${err}`)));
      child.once('error', reject);
    });
    await ready;
    return new DelayLink(child, out);
  }

  /** Stops the link and returns what each direction carried (`a→b` is source → destination). */
  async stop(): Promise<LinkStats[]> {
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    await exited;
    return this.out.map((l) => JSON.parse(l) as LinkStats);
  }
}

/** A Fjord node in namespace `ns`, listening on `addr`:9092 (reached from the root namespace over its veth). */
export async function startFjordIn(ns: string, addr: string, durability: Durability, extra: Readonly<Record<string, string>> = {}): Promise<Broker> {
  const dir = mkdtempSync(join(tmpdir(), `fjord-bench-${ns}-`));
  const logDir = join(dir, 'logs');
  const overrides: Record<string, string> = {
    'offsets.topic.replication.factor': '1',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
    'group.initial.rebalance.delay.ms': '0',
    ...durabilityProps(durability),
    ...extra,
    listeners: `PLAINTEXT://${addr}:${PORT}`,
    'log.dirs': logDir,
    'node.id': '1',
  };
  const args = ['netns', 'exec', ns, process.execPath, join(ROOT, 'bin/fjord.js'), 'start'];
  for (const [k, v] of Object.entries(overrides)) args.push('--override', `${k}=${v}`);
  // `ip netns exec` execs the command, so the pid is the node process's own (its CPU is what is measured).
  const proc = new ManagedProcess(`fjord-${ns}`, 'ip', args, join(dir, 'fjord.log'), { cwd: ROOT });
  const stop = async (): Promise<void> => {
    await proc.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitServing(addr, PORT, 60_000, () => proc.deadReason());
  } catch (e) {
    const log = proc.logTail();
    await stop();
    throw new Error(`fjord in ${ns} did not start: ${(e as Error).message}\n${log}`);
  }
  const pid = proc.pid;
  if (pid === undefined) throw new Error(`fjord in ${ns} has no pid`);
  return { kind: 'fjord', bootstrap: `${addr}:${PORT}`, pid, logDir, deadReason: () => proc.deadReason(), stop };
}
