/**
 * A partition removed from the mirror fetcher and added again before any request went out (a
 * pause then a resume of a topic that has caught up) is still in the fetch session unchanged: an
 * incremental request would leave it out, the source would answer only what changed, and its
 * high watermark, hence `--describe`'s SOURCE-OFFSET and LAG, would stay unknown until the source
 * got a new record. The next request is full, and the source answers every partition in it.
 */
import { describe, expect, it } from 'vitest';
import { FetchSessionHandler, type SessionPartition } from '../../src/fetcher/fetch-session-handler.js';

const limits = { maxWaitMs: 500, minBytes: 1, maxBytes: 1 << 20 };

function part(partition: number, sourceHighWatermark: number): SessionPartition {
  return { key: `t:${partition}`, tp: { topicId: 't', partition }, fetchOffset: 10, lastFetchedEpoch: 0, sourceLeaderEpoch: 0, maxBytes: 1 << 20, sourceHighWatermark };
}

describe('the fetch session after a partition is added again', () => {
  it('sends a full request when a partition whose high watermark is unknown would be left out', () => {
    const session = new FetchSessionHandler();
    session.build([part(0, -1), part(1, -1)], limits);
    expect(session.handle(0, 77)).toBe(true);
    // Both answered: incremental requests name neither while nothing changes.
    const quiet = session.build([part(0, 10), part(1, 10)], limits);
    expect(quiet.sessionId).toBe(77);
    expect(quiet.topics).toEqual([]);
    session.handle(0, 77);
    // Partition 1 was paused and resumed: a new fetch state, high watermark unknown, same offsets.
    const after = session.build([part(0, 10), part(1, -1)], limits);
    expect(after.sessionId).toBe(0);
    expect(after.sessionEpoch).toBe(0);
    expect(after.topics.flatMap((t) => t.partitions.map((p) => p.partition)).sort()).toEqual([0, 1]);
  });
});
