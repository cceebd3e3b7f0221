/**
 * The mirror fetcher's loop against a scripted source (./helpers/scripted-source.ts: a
 * `SourceEndpoint` double that behaves as a small Kafka broker) and real partition logs on disk. Time is a manual clock:
 * backoffs and the unreachable limit pass when the test moves it, never by waiting.
 *
 * Covered: the per-partition error table (NOT_LEADER_OR_FOLLOWER naming a new leader,
 * FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, OFFSET_OUT_OF_RANGE both ways,
 * UNKNOWN_TOPIC_OR_PARTITION transient and for good, an error outside the table), truncation with
 * OffsetsForLeaderEpoch, fetch-session errors, epoch fencing, a batch failing its CRC-32C and an unreachable source.
 * DivergingEpoch answers are in mirror-fetcher-diverging.test.ts. The real-source counterparts are
 * mirror-fetcher-kafka.test.ts, mirror-fetcher-fjord.test.ts and
 * test/interop/mirror-source-failover.test.ts (a three-broker Apache Kafka source).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { BACKOFF_MS, SESSION_ID, batch, closeHarnesses, harness, removeHarnessFiles } from './helpers/scripted-source.js';

afterEach(closeHarnesses);
afterAll(removeHarnessFiles);

describe('MirrorFetcher loop against a scripted source', () => {
  it('copies batches byte for byte at the source offsets, then fetches incrementally in one session', async () => {
    const src = [batch(0, 0, 3), batch(3, 0, 2)];
    const h = await harness({ 0: { batches: [...src] }, 1: { batches: [batch(0, 0, 1)] } });
    h.fetcher.addPartitions([h.tp(0), h.tp(1)]);
    await h.until('both copied', () => h.logs.get(0)!.logEndOffset === 5 && h.logs.get(1)!.logEndOffset === 1);
    h.source.parts.get(0)!.batches.push(batch(5, 0, 4));
    await h.until('the tail copied', () => h.logs.get(0)!.logEndOffset === 9);
    expect((await h.bytes(0)).equals(Buffer.concat([...src, batch(5, 0, 4)]))).toBe(true);
    const [first, ...rest] = h.source.fetches;
    expect(first?.req).toMatchObject({ sessionId: 0, sessionEpoch: 0 });
    expect(first?.req.topics[0]?.partitions.map((p) => p.partition).sort()).toEqual([0, 1]);
    // Incremental requests name only partitions whose position changed.
    expect(rest[0]?.req).toMatchObject({ sessionId: SESSION_ID, sessionEpoch: 1 });
    expect(rest.every((f) => f.req.topics.every((t) => t.partitions.every((p) => p.partition === 0 || p.fetchOffset !== 0)))).toBe(true);
    expect(h.fetcher.stats.recordsDecoded).toBe(0);
    expect(h.failed).toEqual([]);
  });

  it('NOT_LEADER_OR_FOLLOWER naming the new leader: fetches from it with the LastFetchedEpoch', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 3)] } });
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied from broker 1', () => h.logs.get(0)!.logEndOffset === 3);
    const p = h.source.parts.get(0)!;
    p.leaderId = 2;
    p.leaderEpoch = 1;
    p.batches.push(batch(3, 1, 2));
    await h.until('copied from broker 2', () => h.logs.get(0)!.logEndOffset === 5);
    // No OffsetsForLeaderEpoch round: the first Fetch to broker 2 carries the epoch of our last
    // batch, which broker 2 checks (Kafka's truncation on the fetch response).
    expect(h.source.calls.filter((c) => c.startsWith('epochs@2'))).toEqual([]);
    const toTwo = h.source.fetches.find((f) => f.brokerId === 2)!;
    expect(toTwo.req.topics[0]?.partitions[0]).toMatchObject({ fetchOffset: 3, lastFetchedEpoch: 0, currentLeaderEpoch: 1 });
    // Re-homed on the answer itself: no backoff passed before broker 2 was asked.
    const refused = h.source.fetches.filter((f) => f.brokerId === 1).at(-1)!;
    const firstToTwo = h.source.callTimes.find((c) => c.brokerId === 2)!;
    expect(firstToTwo.at).toBe(refused.at);
    expect(h.source.fetches.at(-1)?.brokerId).toBe(2);
    expect(h.fetcher.status(h.tp(0))).toMatchObject({ sourceLeaderId: 2, sourceLeaderEpoch: 1, state: 'fetching' });
    expect(h.failed).toEqual([]);
  });

  it('FENCED_LEADER_EPOCH without a named leader: backs off, refreshes metadata, goes on at the new epoch', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 3)] } });
    h.source.namesLeader = false;
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied', () => h.logs.get(0)!.logEndOffset === 3);
    const metadataBefore = h.source.calls.filter((c) => c === 'metadata').length;
    const p = h.source.parts.get(0)!;
    p.leaderEpoch = 4;
    p.batches.push(batch(3, 4, 2));
    await h.until('copied at epoch 4', () => h.logs.get(0)!.logEndOffset === 5);
    expect(h.source.calls.filter((c) => c === 'metadata').length).toBeGreaterThan(metadataBefore);
    expect(h.fetcher.status(h.tp(0))?.sourceLeaderEpoch).toBe(4);
    expect(h.failed).toEqual([]);
  });

  it('UNKNOWN_LEADER_EPOCH: retries after the backoff and loses nothing', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 3)] } });
    h.source.failNext(0, { errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH });
    h.fetcher.addPartitions([h.tp(0)]);
    const start = h.clock.now();
    await h.until('copied', () => h.logs.get(0)!.logEndOffset === 3);
    expect(h.clock.now() - start).toBeGreaterThanOrEqual(BACKOFF_MS);
    expect(h.source.fetches.length).toBeGreaterThanOrEqual(2);
    expect(h.failed).toEqual([]);
  });

  it('OFFSET_OUT_OF_RANGE below the source log start: restarts the local log there', async () => {
    const h = await harness({ 0: { logStartOffset: 50, batches: [batch(50, 0, 5)] } });
    // What we copied before the source deleted its head (and what followed, unseen).
    await h.logs.get(0)!.appendAsMirror(batch(0, 0, 3));
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied from 50', () => h.logs.get(0)!.logEndOffset === 55);
    expect(h.logs.get(0)!.logStartOffset).toBe(50);
    expect(h.source.calls).toEqual(expect.arrayContaining(['listOffsets@1:-2', 'listOffsets@1:-1']));
    expect((await h.bytes(0)).equals(batch(50, 0, 5))).toBe(true);
    expect(h.failed).toEqual([]);
  });

  it('OFFSET_OUT_OF_RANGE above the source log end: truncates the local log to it', async () => {
    const h = await harness({ 0: { batches: [batch(0, -1, 4)] } });
    // Batches without a partition leader epoch leave the epoch cache empty: no truncating phase.
    await h.logs.get(0)!.appendAsMirror(Buffer.concat([batch(0, -1, 4), batch(4, -1, 6)]));
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('truncated to the source end', () => h.logs.get(0)!.logEndOffset === 4 && h.fetcher.status(h.tp(0))?.fetchOffset === 4);
    h.source.parts.get(0)!.batches.push(batch(4, -1, 1));
    await h.until('then copied', () => h.logs.get(0)!.logEndOffset === 5);
    expect(h.source.calls).toContain('listOffsets@1:-1');
    expect(h.failed).toEqual([]);
  });

  it('truncates a diverged local log with OffsetsForLeaderEpoch, then copies the source history', async () => {
    const shared = batch(0, 0, 10);
    const src = [shared, batch(10, 2, 5), batch(15, 2, 5)];
    const h = await harness({ 0: { leaderEpoch: 2, batches: [...src] } });
    // Offsets 10..14 at epoch 1 exist only here (an unclean election on the old side).
    await h.logs.get(0)!.appendAsMirror(Buffer.concat([shared, batch(10, 1, 5)]));
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('converged', () => h.logs.get(0)!.logEndOffset === 20);
    expect(h.source.calls).toContain('epochs@1:0/1');
    expect((await h.bytes(0)).equals(Buffer.concat(src))).toBe(true);
    expect(h.failed).toEqual([]);
  });

  it('an OffsetsForLeaderEpoch answer with an end offset but no epoch (v0): truncates to that offset before the first Fetch', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 3)] } });
    // Offsets 3..5 exist only here; the source answers as OffsetForLeaderEpoch v0 does, without an epoch.
    await h.logs.get(0)!.appendAsMirror(Buffer.concat([batch(0, 0, 3), batch(3, 0, 3)]));
    h.source.answerNextEpochs(0, { leaderEpoch: -1, endOffset: 3 });
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('fetching', () => h.source.fetches.length > 0);
    // Kafka's AbstractFetcherThread.getOffsetTruncationState: min(the leader's end offset, our log end).
    const first = h.source.fetches[0]!.req.topics.flatMap((t) => t.partitions)[0];
    expect(first).toMatchObject({ fetchOffset: 3, lastFetchedEpoch: 0 });
    h.source.parts.get(0)!.batches.push(batch(3, 0, 1));
    await h.until('copied the source history', () => h.logs.get(0)!.logEndOffset === 4);
    expect(h.source.calls.filter((c) => c.startsWith('diverging'))).toEqual([]);
    expect((await h.bytes(0)).equals(Buffer.concat(h.source.parts.get(0)!.batches))).toBe(true);
    expect(h.failed).toEqual([]);
  });

  it('UNKNOWN_TOPIC_OR_PARTITION: a transient one is retried; a deleted source topic fails for good', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 2)] } });
    h.source.failNext(0, { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied after the transient error', () => h.logs.get(0)!.logEndOffset === 2);
    expect(h.failed).toEqual([]);
    h.source.topicExists = false;
    await h.until('failed', () => h.failed.length > 0);
    expect(h.failed).toHaveLength(1);
    expect(h.failed[0]).toMatchObject({ partition: 0, nonRetryable: true, err: { code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message: 'The source topic is deleted.' } });
    expect(h.fetcher.has(h.tp(0))).toBe(false);
  });

  it.each([ErrorCode.FETCH_SESSION_ID_NOT_FOUND, ErrorCode.INVALID_FETCH_SESSION_EPOCH])('fetch-session error %i: the next request is full again', async (code) => {
    const h = await harness({ 0: { batches: [batch(0, 0, 2)] }, 1: { batches: [batch(0, 0, 1)] } });
    h.fetcher.addPartitions([h.tp(0), h.tp(1)]);
    await h.until('copied', () => h.logs.get(0)!.logEndOffset === 2 && h.logs.get(1)!.logEndOffset === 1);
    await h.until('in an incremental session', () => h.source.fetches.length >= 3);
    const lost = h.source.fetches.length;
    h.source.failNextFetch(code);
    h.source.parts.get(1)!.batches.push(batch(1, 0, 1));
    await h.until('copied after the session was lost', () => h.logs.get(1)!.logEndOffset === 2);
    const after = h.source.fetches.slice(lost);
    expect(after[0]?.req.sessionId).toBe(SESSION_ID);
    expect(after[1]?.req).toMatchObject({ sessionId: 0, sessionEpoch: 0 });
    expect(after[1]?.req.topics[0]?.partitions.map((p) => p.partition).sort()).toEqual([0, 1]);
    expect(after[2]?.req).toMatchObject({ sessionId: SESSION_ID, sessionEpoch: 1 });
    expect(h.failed).toEqual([]);
  });

  it('an error outside the table fails that partition only; the others keep going', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 2)] }, 1: { batches: [batch(0, 0, 2)] } });
    h.source.failNext(0, { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED });
    h.fetcher.addPartitions([h.tp(0), h.tp(1)]);
    await h.until('partition 1 copied', () => h.logs.get(1)!.logEndOffset === 2);
    h.source.parts.get(1)!.batches.push(batch(2, 0, 3));
    await h.until('partition 1 goes on', () => h.logs.get(1)!.logEndOffset === 5);
    expect(h.failed).toHaveLength(1);
    expect(h.failed[0]).toMatchObject({ partition: 0, nonRetryable: false, err: { code: ErrorCode.TOPIC_AUTHORIZATION_FAILED } });
    expect(h.logs.get(0)!.logEndOffset).toBe(0);
  });

  it('a batch epoch above the destination leader epoch fences the partition; a close one asks for a bump', async () => {
    const h = await harness({ 0: { leaderEpoch: 5, batches: [batch(0, 2, 3), batch(3, 5, 2)] } }, 4);
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('fenced', () => h.fenced.length > 0);
    expect(h.fenced).toEqual([{ partition: 0, epoch: 5 }]);
    expect(h.logs.get(0)!.logEndOffset).toBe(3);
    expect(h.fetcher.has(h.tp(0))).toBe(false);
    // Source epoch 5 is within 3 of destination epoch 4: ask for at least 5 + 10.
    expect(h.bumps).toContain(15);
    expect(h.failed).toEqual([]);
  });

  it('a batch whose CRC-32C does not match is not appended and fails that partition (retryably) with CORRUPT_MESSAGE', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 3)] }, 1: { batches: [batch(0, 0, 2)] } });
    h.fetcher.addPartitions([h.tp(0), h.tp(1)]);
    await h.until('both copied', () => h.logs.get(0)!.logEndOffset === 3 && h.logs.get(1)!.logEndOffset === 2);
    // One flipped bit in the last record's value: inside the CRC-covered region (attributes..end),
    // so every header field still reads as valid and only the checksum tells.
    const corrupt = batch(3, 0, 2);
    corrupt[corrupt.length - 1]! ^= 0x01;
    h.source.parts.get(0)!.batches.push(corrupt, batch(5, 0, 1));
    await h.until('partition 0 failed', () => h.failed.length > 0);
    h.source.parts.get(1)!.batches.push(batch(2, 0, 3));
    await h.until('partition 1 goes on', () => h.logs.get(1)!.logEndOffset === 5);
    expect(h.failed).toHaveLength(1);
    // Retryable, as Kafka's AbstractFetcherThread treats a CorruptRecordException from the
    // leader's data: the partition backs off and fetches again (the corruption may be transient).
    expect(h.failed[0]).toMatchObject({ partition: 0, nonRetryable: false, err: { code: ErrorCode.CORRUPT_MESSAGE } });
    expect(h.failed[0]?.err.message).toMatch(/^orders-0: record batch at base offset 3 fails its CRC-32C check \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\)$/);
    // Nothing of that response landed: not the corrupt batch, not the good one behind it.
    expect(h.logs.get(0)!.logEndOffset).toBe(3);
    expect((await h.bytes(0)).equals(batch(0, 0, 3))).toBe(true);
    expect(h.fetcher.has(h.tp(0))).toBe(false);
  });

  it('an unreachable source fails the partition (retryably) once unreachableFailMs passed', async () => {
    const h = await harness({ 0: { batches: [batch(0, 0, 2)] } });
    h.fetcher.addPartitions([h.tp(0)]);
    await h.until('copied', () => h.logs.get(0)!.logEndOffset === 2);
    h.source.unreachable = true;
    const since = h.clock.now();
    await h.until('failed', () => h.failed.length > 0);
    expect(h.clock.now() - since).toBeGreaterThanOrEqual(5_000);
    expect(h.failed[0]).toMatchObject({ partition: 0, nonRetryable: false, err: { code: ErrorCode.NETWORK_EXCEPTION } });
    expect(h.failed[0]?.err.message).toMatch(/^source leader unreachable for \d+ ms: broker 1: connection refused$/);
  });
});
