import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runGroupsCli } from '../../src/cli/groups.js';
import kafkajs from 'kafkajs';
import type { Consumer, Kafka } from 'kafkajs';
import { ROOT, startNode } from '../helpers/node.js';
import type { RunningNode } from '../helpers/node.js';

/**
 * Real kafkajs consumers against a real node process: a group of three spreads partitions, a
 * member leaving hands its partitions over, a killed member is expired after its session
 * timeout, and committed offsets survive a node restart.
 */

const { Kafka: KafkaClient, logLevel } = kafkajs;

let node: RunningNode;
const clients: Consumer[] = [];

function kafka(): Kafka {
  return new KafkaClient({ clientId: 'group-test', brokers: [node.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100 } });
}

async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 40_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

type Assignment = Record<string, number[]>;

/** A consumer tracking its latest assignment and the values it received. */
async function member(groupId: string, topic: string, opts: { autoCommit?: boolean } = {}) {
  const c = kafka().consumer({ groupId, sessionTimeout: 6000, heartbeatInterval: 500, rebalanceTimeout: 20000, maxWaitTimeInMs: 200 });
  clients.push(c);
  const state = { assignment: {} as Assignment, memberId: '', values: [] as string[], consumer: c };
  c.on(c.events.GROUP_JOIN, (e) => {
    state.assignment = e.payload.memberAssignment;
    state.memberId = e.payload.memberId;
  });
  await c.connect();
  await c.subscribe({ topic, fromBeginning: true });
  await c.run({
    autoCommit: opts.autoCommit ?? true,
    eachMessage: async ({ message, partition }) => {
      state.values.push(message.value!.toString());
      if (opts.autoCommit === false) await c.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }]);
    },
  });
  return state;
}

async function cli(args: string[]): Promise<{ code: number; stdout: string }> {
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
  const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    const code = await runGroupsCli(args);
    return { code, stdout: lines.join('\n') };
  } finally {
    log.mockRestore();
    err.mockRestore();
  }
}

const owned = (a: Assignment, topic: string): number[] => [...(a[topic] ?? [])].sort((x, y) => x - y);

beforeAll(async () => {
  node = await startNode({ overrides: { 'group.min.session.timeout.ms': 1000, 'offsets.topic.num.partitions': 5 } });
}, 60_000);

afterAll(async () => {
  for (const c of clients) await c.disconnect().catch(() => undefined);
  await node?.destroy();
  // A restarted node reuses the first data directory, which destroy() then leaves in place.
  if (node) rmSync(node.dataDir, { recursive: true, force: true });
}, 60_000);

describe('consumer groups with kafkajs', () => {
  it('spreads partitions over three members; a leaving and a killed member are taken over', async () => {
    const topic = 'spread';
    const admin = kafka().admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 6 }] });
    const a = await member('g-spread', topic);
    const b = await member('g-spread', topic);
    const killed = spawn(process.execPath, [join(ROOT, 'test/coordinator/fixtures/kafkajs-member.mjs'), node.bootstrap, 'g-spread', topic], { stdio: ['ignore', 'pipe', 'inherit'] });
    let killedAssignment: Assignment = {};
    let lineBuf = '';
    killed.stdout!.on('data', (d: Buffer) => {
      lineBuf += d.toString();
      const lines = lineBuf.split('\n');
      lineBuf = lines.pop()!;
      for (const l of lines) if (l.trim()) killedAssignment = (JSON.parse(l) as { assignment: Assignment }).assignment;
    });
    try {
      // Three members, two partitions each, covering all six.
      await waitFor('three members sharing six partitions', () => {
        const all = [owned(a.assignment, topic), owned(b.assignment, topic), owned(killedAssignment, topic)];
        return all.every((p) => p.length === 2) && new Set(all.flat()).size === 6;
      });
      const described = await admin.describeGroups(['g-spread']);
      expect(described.groups[0]!.state).toBe('Stable');
      expect(described.groups[0]!.members.length).toBe(3);

      // SIGKILL: no LeaveGroup; the coordinator expires the member after its 6 s session timeout.
      const killedAt = Date.now();
      killed.kill('SIGKILL');
      await waitFor('the survivors to take over the killed member', () => {
        const all = [owned(a.assignment, topic), owned(b.assignment, topic)];
        return new Set(all.flat()).size === 6 && all.every((p) => p.length === 3);
      });
      const expiredAfter = Date.now() - killedAt;
      expect(expiredAfter).toBeGreaterThan(3000); // not before the session timeout could pass
      expect((await admin.describeGroups(['g-spread'])).groups[0]!.members.length).toBe(2);

      // A clean leave (LeaveGroup) hands over at once.
      await b.consumer.disconnect();
      await waitFor('the last member to own everything', () => owned(a.assignment, topic).length === 6);
      expect((await admin.describeGroups(['g-spread'])).groups[0]!.members.map((m) => m.memberId)).toEqual([a.memberId]);
    } finally {
      killed.kill('SIGKILL');
      await admin.disconnect();
    }
  }, 90_000);

  it('resumes from committed offsets after a node restart, skipping nothing', async () => {
    const topic = 'resume';
    const admin = kafka().admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] });
    await admin.disconnect();
    const producer = kafka().producer();
    await producer.connect();
    const send = async (from: number, to: number) => {
      for (let i = from; i < to; i++) await producer.send({ topic, messages: [{ key: `k${i % 7}`, value: `v${i}` }] });
    };
    await send(0, 30);
    await producer.disconnect();
    const first = await member('g-resume', topic, { autoCommit: false });
    await waitFor('all 30 records in the first run', () => first.values.length >= 30);
    await first.consumer.disconnect();
    expect(new Set(first.values).size).toBe(30);

    node = await node.restart();
    const p2 = kafka().producer();
    await p2.connect();
    for (let i = 30; i < 50; i++) await p2.send({ topic, messages: [{ key: `k${i % 7}`, value: `v${i}` }] });
    await p2.disconnect();

    const offsets = await (async () => {
      const adm = kafka().admin();
      await adm.connect();
      try {
        return await adm.fetchOffsets({ groupId: 'g-resume', topics: [topic] });
      } finally {
        await adm.disconnect();
      }
    })();
    const committed = offsets[0]!.partitions.reduce((n, p) => n + Number(p.offset), 0);
    expect(committed).toBe(30);

    const second = await member('g-resume', topic, { autoCommit: false });
    await waitFor('the 20 new records', () => second.values.length >= 20);
    await new Promise((r) => setTimeout(r, 1000)); // anything re-delivered would arrive now
    const expected = Array.from({ length: 20 }, (_, i) => `v${30 + i}`).sort();
    expect([...second.values].sort()).toEqual(expected);

    // `fjord groups` sees the live group, its owner and a lag of zero.
    const out = await cli(['--bootstrap-server', node.bootstrap, '--describe', 'g-resume', '--json']);
    expect(out.code).toBe(0);
    const d = JSON.parse(out.stdout) as { type: string; state: string; partitions: { currentOffset: number; logEndOffset: number; lag: number; consumerId: string }[] };
    expect(d.type).toBe('classic');
    expect(d.state).toBe('Stable');
    expect(d.partitions.length).toBe(3);
    expect(d.partitions.reduce((n, p) => n + p.currentOffset, 0)).toBe(50);
    expect(d.partitions.every((p) => p.lag === 0 && p.logEndOffset === p.currentOffset && p.consumerId === second.memberId)).toBe(true);
    const list = await cli(['--bootstrap-server', node.bootstrap, '--list']);
    expect(list.stdout).toMatch(/^GROUP +TYPE +STATE +PROTOCOL-TYPE$/m);
    expect(list.stdout).toMatch(/^g-resume +classic +Stable +consumer$/m);
    expect(list.stdout).toMatch(/^g-spread +classic +/m);
    const human = await cli(['--bootstrap-server', node.bootstrap, '--describe', 'g-resume']);
    expect(human.stdout).toMatch(/^resume +0 +\d+ +\d+ +0 +/m);
    expect((await cli(['--bootstrap-server', node.bootstrap, '--describe', 'nope'])).code).toBe(1);
    expect((await cli(['--list', '--describe', 'x'])).code).toBe(2);
  }, 120_000);
});
