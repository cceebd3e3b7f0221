/**
 * `fjord cluster-mirrors` as a real process between two Fjord node processes (A the source, B
 * the destination): `--help` and usage errors (exit 2), `--start --wait` printing catch-up
 * progress until lag 0, `--describe --watch` redrawing in a pseudo-terminal (`script`) until
 * Ctrl-C, and `--promote`: refused with exit 1 while a topic is paused, and otherwise waiting for
 * lag 0, stopping, and leaving the topic writable with the group offsets of the source.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorAdmin, MirrorAdminError } from '../../src/admin/mirror-admin.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { ROOT, startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

let a: RunningNode;
let b: RunningNode;
const work = mkdtempSync(join(tmpdir(), 'fjord-cli-progress-'));
const FJORD = join(ROOT, 'bin/fjord.js');

function run(...argv: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [FJORD, 'cluster-mirrors', ...argv], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const onB = (...argv: string[]) => run('--bootstrap-server', b.bootstrap, ...argv);

async function produce(node: RunningNode, topic: string, count: number): Promise<void> {
  const p = new Kafka({ clientId: 'progress', brokers: [node.bootstrap], logLevel: logLevel.NOTHING }).producer({ allowAutoTopicCreation: false });
  await p.connect();
  try {
    for (let i = 0; i < count; i += 500) {
      await p.send({ topic, acks: -1, messages: Array.from({ length: Math.min(500, count - i) }, (_, j) => ({ partition: 0, value: `${topic}-${i + j}`.padEnd(200, '.') })) });
    }
  } finally {
    await p.disconnect();
  }
}

async function createTopic(node: RunningNode, topic: string): Promise<void> {
  const admin = new Kafka({ clientId: 'progress', brokers: [node.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
}

function states(topic: string): string[] {
  const r = onB('--describe', '--mirror', 'from-a', '--json');
  return (JSON.parse(r.out) as { topic: string; state: string }[]).filter((p) => p.topic === topic).map((p) => p.state);
}

beforeAll(async () => {
  [a, b] = await Promise.all([startNode(), startNode({ overrides: { 'mirror.metadata.refresh.interval.ms': 1000 } })]);
  const cfg = join(work, 'from-a.properties');
  writeFileSync(cfg, `bootstrap.servers=${a.bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.fetch.max.bytes=16384\n`);
  expect(onB('--create', '--mirror', 'from-a', '--mirror-config', cfg).code).toBe(0);
}, 240_000);

afterAll(async () => {
  await Promise.all([a?.destroy(), b?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

describe('fjord cluster-mirrors progress and promote', () => {
  it('prints a full --help and answers usage errors with exit code 2', () => {
    const help = run('--help');
    expect(help.code).toBe(0);
    for (const flag of ['--create', '--start', '--stop', '--pause', '--resume', '--promote', '--verify', '--list', '--describe', '--delete', '--watch', '--wait', '--dry-run', '--timeout', 'exit codes']) {
      expect(help.out).toContain(flag);
    }
    const unknown = onB('--describe', '--colour');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toBe("fjord cluster-mirrors: unknown option '--colour' (see 'fjord cluster-mirrors --help')\n");
    expect(onB('--list', '--watch').code).toBe(2);
    expect(onB('--promote', '--mirror', 'from-a').code).toBe(2);
    expect(onB('--describe', '--watch', '--interval', 'soon').code).toBe(2);
  });

  it('waits on --start --wait with progress until every partition has lag 0', async () => {
    const topic = 'progress-wait';
    await createTopic(a, topic);
    await produce(a, topic, 3000);
    const r = onB('--start', '--mirror', 'from-a', '--topics', topic, '--wait', '--timeout', '90');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`Started mirroring of topic ${topic}.`);
    expect(r.out).toMatch(/from-a {2}\[[#-]{24}\] +\d+\.\d% {2}\d+ records left {2}(\d+(\.\d)? (B|KiB|MiB)) left/);
    expect(r.out).toMatch(/from-a {2}\[#{24}\] 100\.0% {2}0 records left {2}0 B left .* caught up/);
    expect(r.out).toContain('Caught up: 1 partitions of 1 topics are MIRRORING with lag 0.');
  });

  // Cursor up over the previous frame, then clear to the end of the screen.
  const REDRAW = new RegExp(`${String.fromCharCode(27)}\\[\\d+A${String.fromCharCode(27)}\\[J`);

  it('redraws --describe --watch in a terminal until Ctrl-C', async () => {
    const topic = 'progress-watch';
    await createTopic(a, topic);
    await produce(a, topic, 500);
    expect(onB('--start', '--mirror', 'from-a', '--topics', topic, '--wait').code).toBe(0);
    // `script` runs the command through $SHELL; dash (Debian's /bin/sh) stays in the foreground
    // process group and dies of the Ctrl-C itself unless the command replaces it (`exec`).
    const cmd = `exec ${process.execPath} ${FJORD} cluster-mirrors --bootstrap-server ${b.bootstrap} --describe --mirror from-a --watch --interval 0.5`;
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, SHELL: '/bin/sh' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Two frames at least: the second starts by moving the cursor up over the first.
    await waitFor('a redraw showing the topic', () => REDRAW.test(out) && out.includes(topic), 30_000).catch((e: unknown) => {
      child.kill('SIGKILL');
      throw new Error(`${(e as Error).message}; output so far: ${JSON.stringify(out)}`);
    });
    child.stdin.write('\x03');
    expect(await exited).toBe(0);
    const frames = out.split(REDRAW);
    const last = frames[frames.length - 2] ?? '';
    expect(last).toContain('(Ctrl-C to quit)');
    expect(last).toMatch(/from-a {2}\[#{24}\] 100\.0% .* caught up {2}\(\d+ MIRRORING\)/);
    expect(last).toMatch(new RegExp(`from-a\\s+${topic}\\s+0\\s+500\\s+500\\s+0\\s+MIRRORING`));
  });

  it('refuses to promote a paused topic, changing nothing', async () => {
    const topic = 'progress-paused';
    await createTopic(a, topic);
    await produce(a, topic, 10);
    expect(onB('--start', '--mirror', 'from-a', '--topics', topic, '--wait').code).toBe(0);
    expect(onB('--pause', '--mirror', 'from-a', '--topics', topic).code).toBe(0);
    await waitFor(`${topic} PAUSED`, () => states(topic).every((s) => s === 'PAUSED'), 20_000);
    const r = onB('--promote', '--mirror', 'from-a', '--topics', topic, '--timeout', '20');
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${topic}-0 is PAUSED; lag cannot reach 0, nothing was stopped`);
    expect(states(topic)).toEqual(['PAUSED']);
  });

  it('promotes: waits for lag 0, stops, and leaves the topic writable with the source group offsets', async () => {
    const topic = 'progress-promote';
    await createTopic(a, topic);
    await produce(a, topic, 2000);
    const srcAdmin = new Kafka({ clientId: 'progress', brokers: [a.bootstrap], logLevel: logLevel.NOTHING }).admin();
    await srcAdmin.connect();
    await srcAdmin.setOffsets({ groupId: 'billing', topic, partitions: [{ partition: 0, offset: '1500' }] });
    await srcAdmin.disconnect();
    expect(onB('--start', '--mirror', 'from-a', '--topics', topic).code).toBe(0);
    const r = onB('--promote', '--mirror', 'from-a', '--topics', topic, '--timeout', '90');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`Promoting ${topic} of mirror from-a: waiting up to 90 s for lag 0 on every partition.`);
    expect(r.out).toMatch(/Caught up: lag 0 on 1 partitions; the source had stopped taking writes, nothing is left behind\./);
    expect(r.out).toContain(`Promoted topic ${topic}: STOPPED and writable here; mirrored up to partition@offset 0@2000; group offsets synced at the stop.`);
    expect(states(topic)).toEqual(['STOPPED']);
    const dst = new Kafka({ clientId: 'progress', brokers: [b.bootstrap], logLevel: logLevel.NOTHING });
    const admin = dst.admin();
    await admin.connect();
    const offsets = await admin.fetchOffsets({ groupId: 'billing', topics: [topic] });
    await admin.disconnect();
    expect(offsets[0]?.partitions[0]?.offset).toBe('1500');
    const p = dst.producer({ allowAutoTopicCreation: false });
    await p.connect();
    const sent = await p.send({ topic, acks: -1, messages: [{ partition: 0, value: 'written after promote' }] });
    await p.disconnect();
    // 2000 is the MIRROR_PID_RESET batch the stop appended (KIP-1279 §8.5 e).
    expect(sent[0]?.baseOffset).toBe('2001');
  });
});

describe('--stop --dry-run', () => {
  it('prints what a stop would abort, changes nothing, and the stop then does it', async () => {
    const topic = 'progress-dry';
    await createTopic(a, topic);
    await produce(a, topic, 2);
    const tx = new Kafka({ clientId: 'progress-tx', brokers: [a.bootstrap], logLevel: logLevel.NOTHING }).producer({ transactionalId: 'dry-run-tx', idempotent: true, maxInFlightRequests: 1 });
    await tx.connect();
    const txn = await tx.transaction();
    await txn.send({ topic, acks: -1, messages: [{ partition: 0, value: 'in an open transaction' }] });
    expect(onB('--start', '--mirror', 'from-a', '--topics', topic, '--wait').code).toBe(0);
    const dry = onB('--stop', '--mirror', 'from-a', '--topics', topic, '--dry-run');
    expect(dry.code, dry.err).toBe(0);
    expect(dry.out).toContain(`${topic}-0: MIRRORING -> STOPPED: fetching would end at offset 3; nothing is left behind on the source; nothing would be truncated.`);
    expect(dry.out).toMatch(new RegExp(`${topic}-0: {3}would abort the open transaction of producer \\d+ \\(epoch 0\\), open since offset 2\\.`));
    expect(dry.out).toContain('Dry run: nothing was changed.');
    expect(states(topic)).toEqual(['MIRRORING']);
    const admin = new MirrorAdmin({ bootstrapServers: [b.bootstrap] });
    try {
      expect((await admin.openTransactions([topic])).get(`${topic}-0`)).toHaveLength(1);
      expect(onB('--stop', '--mirror', 'from-a', '--topics', topic).code).toBe(0);
      await waitFor(`${topic} STOPPED`, () => states(topic).every((st) => st === 'STOPPED'), 20_000);
      expect(states(topic)).toEqual(['STOPPED']);
      expect((await admin.openTransactions([topic])).get(`${topic}-0`)).toEqual([]);
    } finally {
      admin.close();
      await txn.abort().catch(() => undefined);
      await tx.disconnect();
    }
  });
});

describe('two operators at once (StateValidationOffset)', () => {
  it('refuses a change based on a read that another operator has since made stale', async () => {
    const topic = 'progress-locked';
    await createTopic(a, topic);
    await produce(a, topic, 5);
    expect(onB('--start', '--mirror', 'from-a', '--topics', topic, '--wait').code).toBe(0);
    const first = new MirrorAdmin({ bootstrapServers: [b.bootstrap] });
    try {
      // Operator 1 reads the mirror, then operator 2 pauses the topic with the CLI.
      const seen = (await first.listClusterMirrors(true)).find((m) => m.mirrorName === 'from-a');
      expect(seen?.topicNames).toContain(topic);
      expect(seen?.stateOffset).toBeGreaterThanOrEqual(0);
      expect(onB('--pause', '--mirror', 'from-a', '--topics', topic).code).toBe(0);
      // Operator 1 stops from what it read: refused, and the topic stays paused.
      const refused = await first.stopMirrorTopics('from-a', [topic], { stateValidationOffset: seen?.stateOffset ?? -1 }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(MirrorAdminError);
      expect((refused as MirrorAdminError).code).toBe(ErrorCode.INVALID_CLUSTER_MIRROR_STATES);
      expect((refused as MirrorAdminError).topics).toEqual([expect.objectContaining({ name: topic, errorCode: ErrorCode.INVALID_CLUSTER_MIRROR_STATES })]);
      await waitFor(`${topic} PAUSED`, () => states(topic).every((s) => s === 'PAUSED'), 20_000);
      expect(states(topic)).toEqual(['PAUSED']);
      // Read again, and the same stop goes through.
      const fresh = (await first.listClusterMirrors(true)).find((m) => m.mirrorName === 'from-a');
      expect(fresh?.stateOffset).toBeGreaterThan(seen?.stateOffset ?? 0);
      expect(await first.stopMirrorTopics('from-a', [topic], { stateValidationOffset: fresh?.stateOffset ?? -1 })).toEqual([expect.objectContaining({ name: topic, errorCode: 0 })]);
    } finally {
      first.close();
    }
  });
});

describe('describe: time lag and link health', () => {
  interface Health {
    topic: string;
    state: string;
    lag: number;
    timeLagMs: number;
    sourceMaxTimestamp: number;
    mirroredMaxTimestamp: number;
    lastFetchAgeMs: number;
    linkError: string | null;
  }
  const health = (topic: string): Health | undefined => (JSON.parse(onB('--describe', '--mirror', 'from-a', '--json').out) as Health[]).find((p) => p.topic === topic);

  // Last in the file: it stops the source.
  it('shows time lag 0 and a fresh fetch when caught up, then the link error once the source is gone', async () => {
    const topic = 'progress-health';
    await createTopic(a, topic);
    const stamp = Date.parse('2026-01-01T00:00:00Z');
    const p = new Kafka({ clientId: 'progress', brokers: [a.bootstrap], logLevel: logLevel.NOTHING }).producer({ allowAutoTopicCreation: false });
    await p.connect();
    await p.send({ topic, acks: -1, messages: [0, 1, 2].map((i) => ({ partition: 0, value: `h${i}`, timestamp: String(stamp + i * 1000) })) });
    await p.disconnect();
    expect(onB('--start', '--mirror', 'from-a', '--topics', topic, '--wait').code).toBe(0);
    const caught = health(topic);
    expect(caught).toMatchObject({ state: 'MIRRORING', lag: 0, timeLagMs: 0, mirroredMaxTimestamp: stamp + 2000, sourceMaxTimestamp: stamp + 2000, linkError: null });
    expect(caught?.lastFetchAgeMs).toBeGreaterThanOrEqual(0);
    expect(caught?.lastFetchAgeMs).toBeLessThan(10_000);
    expect(onB('--describe', '--mirror', 'from-a').out).toMatch(new RegExp(`from-a\\s+${topic}\\s+0\\s+3\\s+3\\s+0\\s+MIRRORING\\s+MIRRORING\\s+0ms\\s+\\d+\\.\\ds ago\\s+ok`));

    await a.destroy();
    let seen: Health | undefined;
    await waitFor(
      'the link error of the stopped source',
      () => {
        seen = health(topic);
        return seen?.linkError !== null && seen?.linkError !== undefined;
      },
      30_000,
      200,
    );
    expect(seen?.state).toBe('MIRRORING');
    expect(seen?.linkError).toBeTruthy();
    expect(onB('--describe', '--mirror', 'from-a').out).toMatch(new RegExp(`${topic}\\s+0\\s+3\\s+3\\s+0\\s+MIRRORING\\s+MIRRORING\\s+0ms\\s+\\d+\\.\\ds ago\\s+error: `));
  });
});
