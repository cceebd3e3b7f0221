/**
 * KIP-227 fetch sessions on a real node over TCP: every case of test/interop/fetch-session-cases.ts
 * (the replies Apache Kafka gives, checked against it by the differential runner), the cache's
 * eviction rules (FetchSessionCacheShard.tryEvict) on a node with one slot, and the node's count
 * and log of the session errors it answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNode, type RunningNode } from '../helpers/node.js';
import { SESSION_CASES } from '../interop/fetch-session-cases.js';
import { SessionProbe, seen, type ProbeTopic } from '../interop/fetch-session-probe.js';

const SESSION_ERRORS = new Set([70, 71, 106]);
const EVICTION_MS = 1000;

let node: RunningNode;
let small: RunningNode;
/** Session errors caused by the tests beside the cases (the retries of the long-poll test included). */
let sessionErrorsCausedHere = 0;

beforeAll(async () => {
  // Every session error is logged at debug; this file counts those lines.
  process.env['FJORD_LOG_LEVEL'] = 'debug';
  node = await startNode({ overrides: { 'num.partitions': 1 } });
  small = await startNode({ overrides: { 'max.incremental.fetch.session.cache.slots': 1, 'min.incremental.fetch.session.eviction.ms': EVICTION_MS } });
}, 180_000);
afterAll(async () => {
  await node?.destroy();
  await small?.destroy();
});

const sessionErrorLines = (n: RunningNode): Record<string, unknown>[] =>
  n
    .logs()
    .split('\n')
    .filter((l) => l.includes('"msg":"fetch session error"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('fetch sessions answer as Apache Kafka does', () => {
  for (const c of SESSION_CASES) {
    it(c.name, async () => {
      const probe = await SessionProbe.connect(node.port);
      try {
        expect(await c.run(probe, c.name)).toEqual(c.expected);
      } finally {
        probe.close();
      }
    });
  }

  it('ends an incremental long poll at the first acks=1 append to its partition', async () => {
    const a = await SessionProbe.connect(node.port);
    const b = await SessionProbe.connect(node.port);
    try {
      const t = await a.createTopic('woken', 1, 't');
      const full = await a.fetch({ sessionId: 0, epoch: 0, partitions: [{ topic: t, partition: 0 }] });
      // Longer than the probe waits for an answer: only the append can end it in time.
      const waiting = a.fetch({ sessionId: full.sessionId, epoch: 1, maxWaitMs: 600_000 });
      // Give the poll time to start waiting; an append before that answers it at once, as well.
      await new Promise((r) => setTimeout(r, 300));
      await b.produce(t, 0);
      expect(seen(await waiting)).toEqual({ errorCode: 0, session: 'A', partitions: ['t:0 e0 hw1 records'] });
    } finally {
      a.close();
      b.close();
    }
  });

  it('answers a long poll INVALID_FETCH_SESSION_EPOCH with its session id when another request moved the epoch meanwhile', async () => {
    const a = await SessionProbe.connect(node.port);
    const b = await SessionProbe.connect(node.port);
    try {
      const t = await a.createTopic('duplicate', 1, 't');
      const full = await a.fetch({ sessionId: 0, epoch: 0, partitions: [{ topic: t, partition: 0 }] });
      const waiting = a.fetchRaw({ sessionId: full.sessionId, epoch: 1, maxWaitMs: 30_000 });
      // Epoch 2 is accepted once the long poll holding epoch 1 has been taken in.
      let other = await b.fetchRaw({ sessionId: full.sessionId, epoch: 2 });
      while (other.errorCode === 71) {
        sessionErrorsCausedHere += 1;
        other = await b.fetchRaw({ sessionId: full.sessionId, epoch: 2 });
      }
      expect(other).toMatchObject({ errorCode: 0, sessionId: full.sessionId });
      await b.produce(t, 0);
      expect(await waiting).toMatchObject({ errorCode: 71, sessionId: full.sessionId, responses: [] });
      sessionErrorsCausedHere += 1;
    } finally {
      a.close();
      b.close();
    }
  });

  it('counts and logs each session error it answered, once', async () => {
    const expected: Record<string, number> = {};
    const names: Record<number, string> = { 70: 'FETCH_SESSION_ID_NOT_FOUND', 71: 'INVALID_FETCH_SESSION_EPOCH', 106: 'FETCH_SESSION_TOPIC_ID_ERROR' };
    for (const c of SESSION_CASES) {
      for (const f of Object.values(c.expected)) if (SESSION_ERRORS.has(f.errorCode)) expected[names[f.errorCode]!] = (expected[names[f.errorCode]!] ?? 0) + 1;
    }
    expected['INVALID_FETCH_SESSION_EPOCH'] = (expected['INVALID_FETCH_SESSION_EPOCH'] ?? 0) + sessionErrorsCausedHere;
    const lines = sessionErrorLines(node);
    const got: Record<string, number> = {};
    for (const l of lines) got[String(l['error'])] = (got[String(l['error'])] ?? 0) + 1;
    expect(got).toEqual(expected);
    expect(lines[0]).toMatchObject({ level: 'debug', clientId: 'wire-test' });
    // The first error of an interval is also a warning, with the totals so far.
    const warn = node.logs().split('\n').find((l) => l.includes('"msg":"fetch session errors answered"'));
    expect(warn).toBeDefined();
    expect(JSON.parse(warn!)).toMatchObject({ level: 'warn', count: 1 });
  });
});

describe('a full cache gives a slot only as Kafka would (one slot, sessions evictable after 1 s)', () => {
  let probe: SessionProbe;
  let t: ProbeTopic;
  const one = () => [{ topic: t, partition: 0 }];
  const two = () => [{ topic: t, partition: 0 }, { topic: t, partition: 1 }];
  const sleepPast = (ms: number) => new Promise((r) => setTimeout(r, ms + 100));

  beforeAll(async () => {
    probe = await SessionProbe.connect(small.port);
    t = await probe.createTopic('evict', 2, 't');
  });
  afterAll(() => probe?.close());

  it('keeps a recent consumer session against another consumer, even a bigger one', async () => {
    const a = await probe.fetch({ sessionId: 0, epoch: 0, partitions: one() });
    expect(a.session).not.toBe('none');
    expect(seen(await probe.fetch({ sessionId: 0, epoch: 0, partitions: two() }))).toMatchObject({ errorCode: 0, session: 'none' });
    expect(seen(await probe.fetch({ sessionId: a.sessionId, epoch: 1 }))).toEqual({ errorCode: 0, session: a.session, partitions: [] });
    await probe.fetch({ sessionId: a.sessionId, epoch: -1, partitions: one() });
  });

  it("lets a follower's session evict a consumer's, and keeps the follower's against consumers", async () => {
    const a = await probe.fetch({ sessionId: 0, epoch: 0, partitions: one() });
    const f = await probe.fetch({ sessionId: 0, epoch: 0, partitions: one(), replicaId: 2 });
    expect(f.sessionId).toBeGreaterThan(0);
    expect((await probe.fetch({ sessionId: a.sessionId, epoch: 1 })).errorCode).toBe(70);
    expect((await probe.fetch({ sessionId: 0, epoch: 0, partitions: two() })).session).toBe('none');
    expect((await probe.fetch({ sessionId: f.sessionId, epoch: 1, replicaId: 2 })).errorCode).toBe(0);
    await probe.fetch({ sessionId: f.sessionId, epoch: -1, partitions: one(), replicaId: 2 });
  });

  it('gives the slot of a session unused for longer than the eviction time to any new session', async () => {
    const a = await probe.fetch({ sessionId: 0, epoch: 0, partitions: two(), replicaId: 2 });
    await sleepPast(EVICTION_MS);
    const b = await probe.fetch({ sessionId: 0, epoch: 0, partitions: one() });
    expect(b.sessionId).toBeGreaterThan(0);
    expect((await probe.fetch({ sessionId: a.sessionId, epoch: 1, replicaId: 2 })).errorCode).toBe(70);
    await probe.fetch({ sessionId: b.sessionId, epoch: -1, partitions: one() });
  });

  it('lets a session in use but older than the eviction time give way to a bigger one only', async () => {
    const a = await probe.fetch({ sessionId: 0, epoch: 0, partitions: one() });
    await sleepPast(EVICTION_MS);
    expect((await probe.fetch({ sessionId: a.sessionId, epoch: 1 })).errorCode).toBe(0);
    expect((await probe.fetch({ sessionId: 0, epoch: 0, partitions: one() })).session).toBe('none');
    const c = await probe.fetch({ sessionId: 0, epoch: 0, partitions: two() });
    expect(c.sessionId).toBeGreaterThan(0);
    expect((await probe.fetch({ sessionId: a.sessionId, epoch: 2 })).errorCode).toBe(70);
    await probe.fetch({ sessionId: c.sessionId, epoch: -1, partitions: one() });
  });
});
