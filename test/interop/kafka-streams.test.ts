/**
 * A real Kafka Streams 4.4 application with group.protocol=streams (KIP-1071) against a Fjord
 * node (WordCount.java): a stateful word count whose repartition and changelog topics the node
 * creates, run as two instances that both reach RUNNING with the four tasks shared between them
 * and the counts exactly right; then one instance leaves and the other takes over every task,
 * restores the store and keeps counting exactly; and the stock `kafka-streams-groups` tool
 * (StreamsGroupCommand) --list and --describe against the node in between.
 *
 * Fjord only: the shared Apache Kafka broker of this suite is the 4.1 line.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { LOG4J2_CONFIG, streamsClasspath } from './lib/paths.js';
import { run, tail } from './lib/run.js';
import { useFjordNode } from './lib/scenario.js';

// Heartbeats every 500 ms so rebalances take a second, not Kafka's 5 s interval.
const fjord = useFjordNode({
  overrides: {
    'group.streams.heartbeat.interval.ms': '500',
    'group.streams.min.heartbeat.interval.ms': '500',
    'group.streams.session.timeout.ms': '10000',
    'group.streams.min.session.timeout.ms': '10000',
  },
});

const STREAMS_GROUPS_TOOL = 'org.apache.kafka.tools.streams.StreamsGroupCommand';
const APP = 'fjord-wordcount';

const JVM = ['-Xmx384m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`, `-Dfjord.loglevel=${process.env['FJORD_INTEROP_LOG_LEVEL'] ?? 'ERROR'}`];

type Obs = Record<string, unknown>;

/** The word count JVM, driven phase by phase over stdin and stdout. */
class WordCountApp {
  private readonly child: ChildProcessWithoutNullStreams;
  private out = '';
  private err = '';
  private readonly lines: Obs[] = [];
  private waiter: (() => void) | null = null;
  private exited = false;

  constructor(bootstrap: string) {
    this.child = spawn('java', [...JVM, '-cp', streamsClasspath(), 'fjord.interop.streams.WordCount', `bootstrap=${bootstrap}`, `app=${APP}`], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.child.stdout.on('data', (b: Buffer) => {
      this.out += b.toString('utf8');
      let i;
      while ((i = this.out.indexOf('\n')) >= 0) {
        const line = this.out.slice(0, i).trim();
        this.out = this.out.slice(i + 1);
        if (line.startsWith('{')) this.lines.push(JSON.parse(line) as Obs);
        this.waiter?.();
      }
    });
    this.child.stderr.on('data', (b: Buffer) => {
      this.err += b.toString('utf8');
    });
    this.child.on('close', () => {
      this.exited = true;
      this.waiter?.();
    });
  }

  /** The next JSON line the program prints (an error line, or its exit, fails). */
  async next(timeoutMs = 120_000): Promise<Obs> {
    const deadline = Date.now() + timeoutMs;
    while (this.lines.length === 0) {
      if (this.exited) throw new Error(`WordCount exited:\n${tail(this.err, 20)}`);
      if (Date.now() > deadline) throw new Error(`WordCount printed nothing in ${timeoutMs} ms:\n${tail(this.err, 20)}`);
      await new Promise<void>((r) => {
        this.waiter = r;
        setTimeout(r, 1000).unref();
      });
    }
    const obs = this.lines.shift()!;
    if ('error' in obs) throw new Error(`WordCount failed: ${String(obs['error'])}: ${String(obs['message'])}\n${tail(this.err, 20)}`);
    return obs;
  }

  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  kill(): void {
    if (this.exited || this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

async function streamsGroupsTool(...args: string[]): Promise<string> {
  const r = await run('java', [...JVM, '-cp', streamsClasspath(), STREAMS_GROUPS_TOOL, '--bootstrap-server', fjord.get().bootstrap, ...args], { timeoutMs: 90_000 });
  if (r.code !== 0) throw new Error(`kafka-streams-groups ${args.join(' ')} failed (exit ${r.code}):\n${tail(r.stdout, 15)}\n${tail(r.stderr, 15)}`);
  return r.stdout;
}

/** The data rows of a tool table whose first column is `first`, split on whitespace. */
function rows(out: string, first: string): string[][] {
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((cols) => cols[0] === first);
}

let app: WordCountApp | null = null;
afterAll(() => app?.kill());

describe('Kafka Streams 4.4 with group.protocol=streams', () => {
  it('runs a stateful word count on two instances, moves the tasks when one leaves, and the tool lists and describes the group', async () => {
    app = new WordCountApp(fjord.get().bootstrap);
    const running = await app.next();
    expect(running['phase']).toBe('running');
    const a = running['a'] as string[];
    const b = running['b'] as string[];
    // Two subtopologies on two partitions: four tasks, shared by the two instances.
    expect([...a, ...b].sort()).toEqual(['0_0', '0_1', '1_0', '1_1']);
    expect(a.length).toBe(2);

    expect(await streamsGroupsTool('--list')).toContain(APP);
    // --describe: the committed offsets of the source and repartition topics, all caught up.
    const offsets = rows(await streamsGroupsTool('--describe', '--group', APP), APP).map((r) => `${r[1]}-${r[2]} lag ${r[3]}`).sort();
    expect(offsets).toEqual([`${APP}-counts-repartition-0 lag 0`, `${APP}-counts-repartition-1 lag 0`, `${APP}-input-0 lag 0`, `${APP}-input-1 lag 0`]);
    // --state: GROUP, COORDINATOR (ID) in two columns, ASSIGNOR, STATE, #MEMBERS.
    const state = rows(await streamsGroupsTool('--describe', '--group', APP, '--state'), APP);
    expect(state.map((r) => [r[3], r[4], r[5]])).toEqual([['sticky', 'Stable', '2']]);
    // --members: one row per instance, each its own process, with the tasks it runs.
    const members = rows(await streamsGroupsTool('--describe', '--group', APP, '--members'), APP);
    expect(members).toHaveLength(2);
    expect(new Set(members.map((r) => r[2])).size).toBe(2);
    expect(members.every((r) => r[4] === 'ACTIVE:')).toBe(true);

    app.send('close');
    const moved = await app.next();
    expect(moved).toMatchObject({ phase: 'moved', b: ['0_0', '0_1', '1_0', '1_1'] });
    const after = rows(await streamsGroupsTool('--describe', '--group', APP, '--members'), APP);
    expect(after).toHaveLength(1);
    expect(after[0]!.slice(4).join(' ')).toBe('ACTIVE: 0:[0,1]; 1:[0,1];');

    app.send('stop');
    const done = await app.next();
    expect(done['exactSequences']).toBe(true);
    expect(done['counts']).toEqual(done['expected']);
    expect(done['linesProduced']).toBe(80);
  }, 240_000);
});
