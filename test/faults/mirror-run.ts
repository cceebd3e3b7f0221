/**
 * A cluster mirror beside a fault run: a source node of the netns cluster (`sources: 1`) taking
 * writes (mirror-client.ts), the mirror driven with `fjord cluster-mirrors` from the client
 * namespace, and the checks made on the partition logs on disk afterwards.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ControlRecordType, controlTypeOf } from '../../src/protocol/control-records.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { ROOT } from '../helpers/node.js';
import { partitionBytes } from './history-checker.js';
import type { NetnsCluster, NetnsNode } from './netns-cluster.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface Run {
  readonly proc: ChildProcess;
  /** Exit code and everything printed. */
  readonly done: Promise<{ code: number; out: string }>;
  /** What it printed so far. */
  out(): string;
}

/** Runs a command in the client namespace. */
export function run(c: NetnsCluster, args: readonly string[]): Run {
  const proc = c.spawnClient(args);
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<{ code: number; out: string }>((r) => proc.once('exit', (code) => r({ code: code ?? -1, out })));
  return { proc, done, out: () => out };
}

/** The JSON lines of a command's output. */
export const jsonLines = (out: string): Record<string, unknown>[] =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

export async function until(what: string, pred: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export interface Described {
  readonly partition: number;
  readonly state: string;
  readonly destinationOffset: number;
  readonly lag: number;
}

export class MirrorRun {
  private producer: Run | null = null;

  constructor(
    readonly c: NetnsCluster,
    readonly source: NetnsNode,
    readonly mirror: string,
    readonly topic: string,
    readonly partitions: number,
  ) {}

  cli(bootstrap: string, args: readonly string[]): Run {
    return run(this.c, ['node', join(ROOT, 'bin/fjord.js'), 'cluster-mirrors', '--bootstrap-server', bootstrap, ...args]);
  }

  client(mode: string, opts: object): Run {
    return run(this.c, ['node', join(ROOT, 'bench/run.mjs'), join(ROOT, 'test/faults/mirror-client.ts'), mode, JSON.stringify({ topic: this.topic, partitions: this.partitions, ...opts })]);
  }

  /** Creates the topic on the source and writes to it until `stopSource`. */
  async startSource(records: number): Promise<void> {
    this.producer = this.client('source', { bootstrap: this.source.bootstrap });
    await until(`${records} writes on the source`, () => this.sourceAcked() >= records, 60_000);
  }

  sourceAcked(): number {
    return Math.max(0, ...jsonLines(this.producer?.out() ?? '').map((l) => Number(l.acked)));
  }

  async stopSource(): Promise<void> {
    this.producer?.proc.kill('SIGTERM');
    await this.producer?.done;
  }

  /** Creates the mirror of the source (through `bootstrap`) and starts mirroring the topic. */
  async create(dir: string, bootstrap: string): Promise<void> {
    const config = join(dir, `${this.mirror}.properties`);
    writeFileSync(config, `bootstrap.servers=${this.source.bootstrap}\n`);
    const created = await this.cli(bootstrap, ['--create', '--mirror', this.mirror, '--mirror-config', config]).done;
    if (created.code !== 0) throw new Error(`--create: ${created.out}`);
    await this.start(bootstrap);
  }

  async start(bootstrap: string): Promise<void> {
    const started = await this.cli(bootstrap, ['--start', '--mirror', this.mirror, '--topics', this.topic]).done;
    if (started.code !== 0) throw new Error(`--start: ${started.out}`);
  }

  async describe(bootstrap: string): Promise<Described[]> {
    const { code, out } = await this.cli(bootstrap, ['--describe', '--mirror', this.mirror, '--json']).done;
    if (code !== 0) return [];
    const rows = out.split('\n').find((l) => l.startsWith('['));
    return rows === undefined ? [] : (JSON.parse(rows) as Described[]);
  }

  /** Resolves once every partition of the mirror is in `state` and `pred` holds for it. */
  async untilAll(bootstrap: string, state: string, timeoutMs: number, pred: (p: Described) => boolean = () => true): Promise<void> {
    await until(
      `every ${this.topic} partition ${state}`,
      async () => {
        const d = await this.describe(bootstrap);
        return d.length === this.partitions && d.every((p) => p.state === state && pred(p));
      },
      timeoutMs,
    );
  }

  /** Partition → leader, as Metadata from the nodes but `except` names it. */
  async leaders(except: NetnsNode | null = null): Promise<Map<number, number>> {
    const others = this.c.nodes.filter((n) => n !== except).map((n) => n.bootstrap);
    const { out } = await this.client('leaders', { bootstrap: others.join(',') }).done;
    return new Map(jsonLines(out).map((l) => [Number(l.partition), Number(l.leader)]));
  }

  /** One acks=all record to every partition; the errors of those not acknowledged in time. */
  async writeEach(deadlineMs: number): Promise<string[]> {
    const { out } = await this.client('write', { bootstrap: this.c.bootstrap, deadlineMs }).done;
    const lines = jsonLines(out);
    const errors = lines.filter((l) => l.error !== undefined).map((l) => `${this.topic}-${String(l.partition)}: ${String(l.error)}`);
    return lines.length === this.partitions ? errors : [...errors, `answers for ${lines.length} of ${this.partitions} partitions: ${out.slice(-500)}`];
  }
}

/** Where the first MIRROR_PID_RESET batch starts in a partition's bytes, or -1. */
export function pidResetAt(bytes: Buffer): number {
  for (const b of iterateBatches(bytes)) if (b.isControl && controlTypeOf(b) === ControlRecordType.MIRROR_PID_RESET) return b.offset;
  return -1;
}

/**
 * Every replica of every partition of `topic` against the source's log: up to its first
 * MIRROR_PID_RESET (`stopped`), or entirely (mirroring), a byte prefix of the source's bytes.
 */
export function notSourcePrefix(c: NetnsCluster, source: NetnsNode, topic: string, partitions: number, stopped: boolean): string[] {
  const out: string[] = [];
  for (let p = 0; p < partitions; p++) {
    const src = partitionBytes(source.dataDir, topic, p);
    for (const n of c.nodes) {
      const dst = partitionBytes(n.dataDir, topic, p);
      const at = stopped ? pidResetAt(dst) : dst.length;
      if (stopped && at <= 0) out.push(`${topic}-${p} on node ${n.nodeId}: no mirrored batch before a MIRROR_PID_RESET`);
      else if (!dst.subarray(0, at).equals(src.subarray(0, at))) out.push(`${topic}-${p} on node ${n.nodeId}: its first ${at} bytes are not the source's`);
    }
  }
  return out;
}
