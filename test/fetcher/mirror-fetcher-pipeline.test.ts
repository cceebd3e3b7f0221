/**
 * The mirror fetcher's overlap of the next Fetch with the previous answer's appends
 * (`mirror.fetch.pipeline.max.bytes`, ./append-pipeline.ts), against the scripted source of
 * ./helpers/scripted-source.ts and real partition logs on disk, on a manual clock. What the
 * overlap must never change:
 *
 * - a partition that fails while its append is still being written is reported (and its
 *   removal resolves) only once that append is done, so the state machine never acts on a log
 *   the fetcher is still writing;
 * - an answer to a Fetch sent before the partition moved to another source leader is dropped, as
 *   Kafka's AbstractFetcherThread.processFetchRequest drops data for a fetch position that is no
 *   longer the partition's: a deposed leader's history never reaches the destination log;
 * - a plain answer does everything the one-by-one path does: the source's log start is followed,
 *   and the time lag and link health fields are kept.
 *
 * Each runs with the overlap on and, where the hazard is not the overlap's own, off as well.
 *
 * With `mirror.fetch.pipeline.max.bytes` unset the fetcher decides by itself from the round trip
 * it measures: over a link with a round trip it overlaps and copies faster than with the overlap
 * off on the same link; on a link without one (loopback), and through long polls that only wait
 * for data, it does not; an explicit value wins either way.
 */
import { afterAll, afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { PIPELINE_AUTO_MAX_BYTES, type MirrorFetcherConfig } from '../../src/fetcher/fetcher-config.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { batch, closeHarnesses, harness, removeHarnessFiles } from './helpers/scripted-source.js';

afterEach(closeHarnesses);
afterAll(removeHarnessFiles);

/** Lets the test hold a real log's mirror appends: each waits until the gate is opened. */
function gateAppends(log: { appendAsMirror(records: Buffer): Promise<unknown> }): { close(): void; open(): void; waiting(): number } {
  const real = log.appendAsMirror.bind(log);
  let gate: Promise<void> | null = null;
  let openGate = (): void => undefined;
  let waiting = 0;
  log.appendAsMirror = async (records: Buffer) => {
    if (gate !== null) {
      waiting++;
      await gate;
      waiting--;
    }
    return real(records);
  };
  return {
    close() {
      gate = new Promise<void>((r) => (openGate = r));
    },
    open() {
      gate = null;
      openGate();
    },
    waiting: () => waiting,
  };
}

describe('MirrorFetcher giving a Fetch answer back to its endpoint', () => {
  for (const pipelineMaxBytes of [0, 10 << 20]) {
    it(`releases an answer only once every append of its records finished (pipeline ${pipelineMaxBytes})`, async () => {
      const h = await harness({ 0: { batches: [batch(0, 0, 3)] } }, 1000, { pipelineMaxBytes });
      const log = h.logs.get(0)!;
      const gate = gateAppends(log);
      onTestFinished(() => gate.open());
      // Each answer carries a release that notes whether its records' append had landed by then.
      const releasedAt: number[] = [];
      const fetch = h.source.fetch.bind(h.source);
      h.source.fetch = async (...args) => {
        const res = await fetch(...args);
        const withRecords = res.topics.some((t) => t.partitions.some((p) => (p.records?.length ?? 0) > 0));
        return withRecords ? { ...res, release: () => releasedAt.push(log.logEndOffset) } : res;
      };
      gate.close();
      h.fetcher.addPartitions([h.tp(0)]);
      await h.until('the answer is being appended', () => gate.waiting() === 1);
      // With the overlap the loop goes on fetching meanwhile; without it, it waits for the append.
      if (pipelineMaxBytes > 0) await h.until('the next Fetches went out', () => h.source.callTimes.length > 3);
      expect(releasedAt).toEqual([]);
      gate.open();
      await h.until('released', () => releasedAt.length === 1);
      expect(releasedAt).toEqual([3]);
      expect((await h.bytes(0)).equals(batch(0, 0, 3))).toBe(true);
    });
  }
});

describe('MirrorFetcher with appends overlapping the next Fetch', () => {
  it('a partition failing while its append is being written is reported, and its removal resolves, only after that append', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 3)] } }, 1000, { pipelineMaxBytes: 10 << 20 });
    const log = h.logs.get(0)!;
    const gate = gateAppends(log);
    onTestFinished(() => gate.open());
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied', () => log.logEndOffset === 3);
    gate.close();
    h.source.parts.get(0)!.batches.push(batch(3, 0, 2));
    await h.until('the next answer is being appended', () => gate.waiting() === 1);
    // The source goes away while that append is still being written, for longer than the
    // unreachable limit: the fetcher gives the partition up.
    h.source.unreachable = true;
    let endWhenReported = -1;
    const reported = new Promise<void>((resolve) => {
      const poll = (): void => {
        if (h.failed.length > 0) {
          endWhenReported = log.logEndOffset;
          resolve();
        } else setImmediate(poll);
      };
      poll();
    });
    await h.until('given up', () => !h.fetcher.has(h.tp(0)));
    let removed = false;
    const removal = h.fetcher.removePartitions([h.tp(0)]).then(() => (removed = true));
    await h.until('some time on', () => h.source.callTimes.length > 3);
    expect(h.failed).toEqual([]);
    expect(removed).toBe(false);
    gate.open();
    await reported;
    await removal;
    // The append the fetcher had started landed before anyone was told the partition failed.
    expect(endWhenReported).toBe(5);
    expect(h.failed[0]).toMatchObject({ partition: 0, nonRetryable: false, err: { code: ErrorCode.NETWORK_EXCEPTION } });
    expect((await h.bytes(0)).equals(Buffer.concat([batch(0, 0, 3), batch(3, 0, 2)]))).toBe(true);
  });

  it.each([0, 10 << 20])('an answer from a deposed source leader, still on the wire when the partition moved, is dropped (pipelineMaxBytes %i)', async (pipelineMaxBytes) => {
    const h = await harness({ 0: { batches: [batch(0, 0, 3)] } }, 1000, { pipelineMaxBytes });
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied 0..2', () => h.logs.get(0)!.logEndOffset === 3);
    // Broker 1 takes three more records; its answer with them is delayed on the wire.
    const p = h.source.parts.get(0)!;
    const release = h.source.holdNextFetch(1);
    p.batches.push(batch(3, 0, 3));
    const asked = h.source.fetches.length;
    await h.until('broker 1 asked again', () => h.source.fetches.length > asked);
    // Meanwhile broker 1 is deposed by an unclean election: broker 2, which had only 0..2, leads
    // at epoch 1 and takes other writes from offset 3.
    p.leaderId = 2;
    p.leaderEpoch = 1;
    p.batches = [batch(0, 0, 3), batch(3, 1, 2)];
    await h.fetcher.refreshMetadata();
    await h.until('copied from broker 2', () => h.logs.get(0)!.logEndOffset === 5);
    // Broker 1's answer arrives at last.
    const before = h.source.fetches.length;
    release();
    await h.until('broker 2 asked twice more', () => h.source.fetches.filter((f, i) => i >= before && f.brokerId === 2).length >= 2);
    expect((await h.bytes(0)).equals(Buffer.concat(p.batches))).toBe(true);
    // Nothing of broker 1's history was appended, so broker 2 never had to say we diverged.
    expect(h.source.calls.filter((c) => c.startsWith('diverging'))).toEqual([]);
    expect(h.fetcher.stats.divergingEpochTruncations).toBe(0);
    expect(h.failed).toEqual([]);
  });

  it.each([0, 10 << 20])('a plain answer moves the local log start with the source and keeps the time lag fields (pipelineMaxBytes %i)', async (pipelineMaxBytes) => {
    const h = await harness({ 0: { batches: [batch(0, 0, 3), batch(3, 0, 2)] } }, 1000, { pipelineMaxBytes });
    const log = h.logs.get(0)!;
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied', () => log.logEndOffset === 5);
    // DeleteRecords on the source up to offset 3, then a new batch.
    const p = h.source.parts.get(0)!;
    p.logStartOffset = 3;
    p.batches = [batch(3, 0, 2), batch(5, 0, 1)];
    await h.until('tail copied and log start followed', () => log.logEndOffset === 6 && log.logStartOffset === 3);
    const st = h.fetcher.status(h.tp(0))!;
    expect(st.mirroredMaxTimestamp).toBe(1_700_000_000_000);
    expect(st.lastFetchMs).toBeGreaterThan(0);
    expect(st.linkError).toBeNull();
    expect(h.failed).toEqual([]);
  });

  it('three fetch loops per source broker, appends overlapped, leaders moving back and forth: every partition ends byte for byte the source\'s', async () => {
    const n = 8;
    const h = await harness(Object.fromEntries(Array.from({ length: n }, (_, i) => [i, { batches: [batch(0, 0, 2)] }])), 1000, { numFetchers: 3 });
    h.fetcher.addPartitions(Array.from({ length: n }, (_, i) => h.tp(i)));
    const caughtUp = (): boolean => [...h.source.parts].every(([i, p]) => h.logs.get(i)!.logEndOffset === h.source.partitionLeo(p));
    await h.until('first batches copied', caughtUp);
    for (let round = 1; round <= 6; round++) {
      for (const [i, p] of h.source.parts) {
        const leo = h.source.partitionLeo(p);
        // Half the partitions change leader (a clean election: same history) each round.
        if ((i + round) % 2 === 0) {
          p.leaderId = p.leaderId === 1 ? 2 : 1;
          p.leaderEpoch++;
        }
        p.batches.push(batch(leo, p.leaderEpoch, 1 + (i % 3)));
      }
      await h.until(`round ${round} copied`, caughtUp);
    }
    for (const [i, p] of h.source.parts) expect((await h.bytes(i)).equals(Buffer.concat(p.batches))).toBe(true);
    // Both brokers served all three loops' sessions.
    expect(new Set(h.source.fetches.map((f) => f.brokerId))).toEqual(new Set([1, 2]));
    expect(h.fetcher.stats.divergingEpochTruncations).toBe(0);
    expect(h.failed).toEqual([]);
  });
});

/** Virtual time one append takes to reach the disk in the tests below. */
const APPEND_MS = 20;
const BATCHES = 12;

/**
 * Copies BATCHES one-batch answers (the partition max bytes holds one) over a link with
 * `roundTripMs` into a log whose appends take APPEND_MS, in virtual time. Returns the virtual
 * time the copy took, how many Fetches went out while an append was being written, and the
 * fetch loop as the fetcher reports it. `idlePolls` long polls find nothing before the data comes.
 */
async function copyOverLink(roundTripMs: number, config: Partial<MirrorFetcherConfig>, idlePolls = 0): Promise<{ ms: number; overlapped: number; loop: { roundTripMs: number; pipelineBudget: number } }> {
  // Offsets 10.. keep every batch the same size, so the max bytes let exactly one through.
  const batches = Array.from({ length: BATCHES }, (_, i) => batch(10 + 2 * i, 0, 2));
  const h = await harness({ 0: { logStartOffset: 10, batches: idlePolls > 0 ? [] : batches } }, 1000, { partitionMaxBytes: batches[0]!.length, ...config });
  h.source.roundTripMs = roundTripMs;
  const log = h.logs.get(0)!;
  await log.truncateFullyAndStartAt(10);
  let appending = 0;
  let writing = 0;
  let overlapped = 0;
  const append = log.appendAsMirror.bind(log);
  log.appendAsMirror = async (records: Buffer) => {
    appending++;
    try {
      await new Promise<void>((r) => h.timers.schedule(APPEND_MS, r));
      writing++;
      return await append(records);
    } finally {
      if (writing > 0) writing--;
      appending--;
    }
  };
  // Virtual time stands still while the real write is on disk: the append costs APPEND_MS only.
  const busy = (): boolean => writing > 0;
  const fetch = h.source.fetch.bind(h.source);
  h.source.fetch = (...args) => {
    if (appending > 0) overlapped++;
    return fetch(...args);
  };
  h.fetcher.addPartitions([h.tp(0)]);
  if (idlePolls > 0) {
    const before = h.source.fetches.length;
    await h.until(`${idlePolls} idle long polls`, () => h.source.fetches.length >= before + idlePolls, busy);
    h.source.parts.get(0)!.batches = batches;
  }
  const start = h.clock.now();
  await h.until('copied', () => log.logEndOffset === 10 + 2 * BATCHES, busy);
  const ms = h.clock.now() - start;
  expect((await h.bytes(0)).equals(Buffer.concat(batches))).toBe(true);
  expect(h.failed).toEqual([]);
  const loop = h.fetcher.fetchLoops()[0]!;
  return { ms, overlapped, loop: { roundTripMs: loop.roundTripMs, pipelineBudget: loop.pipelineBudget } };
}

describe('MirrorFetcher deciding the overlap by itself (mirror.fetch.pipeline.max.bytes unset)', () => {
  it('overlaps over a link with a 20 ms round trip, and copies faster than with the overlap off on the same link', async () => {
    const auto = await copyOverLink(20, {});
    const off = await copyOverLink(20, { pipelineMaxBytes: 0 });
    expect(auto.loop).toEqual({ roundTripMs: 20, pipelineBudget: PIPELINE_AUTO_MAX_BYTES });
    expect(auto.overlapped).toBeGreaterThan(0);
    expect(off.overlapped).toBe(0);
    // Off, each answer costs a round trip plus an append; overlapped, about the larger of the two.
    expect(auto.ms / off.ms).toBeLessThan(0.75);
  });

  it('does not overlap on a link without a round trip, even after long polls that waited for data', async () => {
    const auto = await copyOverLink(0, {}, 3);
    expect(auto.loop).toEqual({ roundTripMs: 0, pipelineBudget: 0 });
    expect(auto.overlapped).toBe(0);
  });

  it('an explicit mirror.fetch.pipeline.max.bytes wins: on without a round trip, off with one', async () => {
    const on = await copyOverLink(0, { pipelineMaxBytes: 10 << 20 });
    expect(on.loop.pipelineBudget).toBe(10 << 20);
    expect(on.overlapped).toBeGreaterThan(0);
    const off = await copyOverLink(20, { pipelineMaxBytes: 0 });
    expect(off.loop).toEqual({ roundTripMs: 20, pipelineBudget: 0 });
    expect(off.overlapped).toBe(0);
  });
});

