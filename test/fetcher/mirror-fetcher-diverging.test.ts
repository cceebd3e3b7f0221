/**
 * LastFetchedEpoch and DivergingEpoch on mirror fetches, against the scripted source of
 * ./helpers/scripted-source.ts (which checks LastFetchedEpoch as Kafka's Partition.fetchRecords
 * does) and real partition logs on disk: after a source leader change the destination goes on
 * fetching without an OffsetsForLeaderEpoch round, and the source's DivergingEpoch answer makes it
 * cut the history the source lost before anything more is appended, as Kafka's
 * AbstractFetcherThread.truncateOnFetchResponse does.
 * The same against a real three-broker Apache Kafka source: test/interop/mirror-source-failover.test.ts.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { batch, closeHarnesses, harness, removeHarnessFiles } from './helpers/scripted-source.js';

afterEach(closeHarnesses);
afterAll(removeHarnessFiles);

describe('MirrorFetcher LastFetchedEpoch / DivergingEpoch', () => {
  it('every Fetch carries the epoch of the last batch copied', async () => {
    const h = await harness({ 0: { leaderEpoch: 2, batches: [batch(0, 0, 3), batch(3, 2, 2)] } });
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied', () => h.logs.get(0)!.logEndOffset === 5);
    h.source.parts.get(0)!.batches.push(batch(5, 2, 1));
    await h.until('the tail copied', () => h.logs.get(0)!.logEndOffset === 6);
    const sent = h.source.fetches.flatMap((f) => f.req.topics.flatMap((t) => t.partitions));
    // An empty log has no epoch to send; after the copy, the epoch of the batch below the offset.
    expect(sent[0]).toMatchObject({ fetchOffset: 0, lastFetchedEpoch: -1 });
    expect(sent.find((p) => p.fetchOffset === 5)).toMatchObject({ lastFetchedEpoch: 2 });
    expect(h.source.calls.filter((c) => c.startsWith('diverging'))).toEqual([]);
  });

  it.each([0, 10 << 20])('an unclean election on the source while mirroring (pipelineMaxBytes %i): the suffix the source lost is truncated and replaced by its new history', async (pipelineMaxBytes) => {
    const h = await harness({ 0: { batches: [batch(0, 0, 3), batch(3, 0, 3)] } }, 1000, { pipelineMaxBytes });
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied 0..5', () => h.logs.get(0)!.logEndOffset === 6);
    // Broker 2, out of sync with only 0..2, is elected at epoch 1 and takes writes from offset 3.
    const p = h.source.parts.get(0)!;
    p.leaderId = 2;
    p.leaderEpoch = 1;
    p.batches = [batch(0, 0, 3), batch(3, 1, 4)];
    await h.until('converged', () => h.logs.get(0)!.logEndOffset === 7);
    expect(h.source.calls).toContain('diverging@2:0/0@3');
    expect(h.source.calls.filter((c) => c.startsWith('epochs@2'))).toEqual([]);
    expect((await h.bytes(0)).equals(Buffer.concat(p.batches))).toBe(true);
    expect(h.fetcher.stats.divergingEpochTruncations).toBe(1);
    expect(h.fetcher.stats.epochLookups).toBe(0);
    expect(h.fetcher.stats.recordsDecoded).toBe(0);
    expect(h.failed).toEqual([]);
  });

  it('a DivergingEpoch naming an epoch we do not hold: truncates to our end below it, then asks again', async () => {
    const h = await harness({ 0: { leaderEpoch: 3, batches: [batch(0, 0, 3), batch(3, 1, 3), batch(6, 3, 2)] } });
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied', () => h.logs.get(0)!.logEndOffset === 8);
    // Broker 2 never saw epochs 1 and 3: it led epoch 2 from 3 on, and is elected at epoch 4.
    const p = h.source.parts.get(0)!;
    p.leaderId = 2;
    p.leaderEpoch = 4;
    p.batches = [batch(0, 0, 3), batch(3, 2, 3), batch(6, 4, 1)];
    await h.until('converged', () => h.logs.get(0)!.logEndOffset === 7 && h.fetcher.status(h.tp(0))?.fetchOffset === 7);
    // LastFetchedEpoch 3: broker 2's epoch 2 ends at 6, and we hold no epoch 2, so we cut to where
    // our epoch 1 ends (6) and ask with epoch 1; epoch 0 ends at 3 there: cut to 3, fetch from it.
    expect(h.source.calls.filter((c) => c.startsWith('diverging'))).toEqual(['diverging@2:0/2@6', 'diverging@2:0/0@3']);
    expect((await h.bytes(0)).equals(Buffer.concat(p.batches))).toBe(true);
    expect(h.failed).toEqual([]);
  });
});
