/**
 * The fetch-session cache's eviction rules (FetchSessionCacheShard.tryEvict), on the cache itself
 * with explicit times: the node-level tests in fetch-session.test.ts cover the same rules over TCP.
 */
import { describe, expect, it } from 'vitest';
import { FetchSessionCache, type CachedPartition } from '../../src/broker/fetch-session.js';

const EVICTION_MS = 1000;

function parts(n: number): Map<string, CachedPartition> {
  const m = new Map<string, CachedPartition>();
  for (let i = 0; i < n; i++) {
    m.set(`t\u0000${i}`, {
      topicId: 't',
      topicName: 't',
      partition: i,
      fetchOffset: 0,
      maxBytes: 1,
      currentLeaderEpoch: -1,
      lastFetchedEpoch: -1,
      highWatermark: 0,
      logStartOffset: 0,
      mirrorLeaderEpoch: -1,
      sentMirrorLeaderEpoch: -1,
    });
  }
  return m;
}

describe('fetch session cache eviction', () => {
  it('opens no session at all with zero slots', () => {
    expect(new FetchSessionCache(0, EVICTION_MS).maybeCreate(0, true, true, parts(1))).toBeNull();
  });

  it('lets a follower evict the consumer session with the fewest partitions, never a recent follower session', () => {
    const cache = new FetchSessionCache(3, EVICTION_MS);
    const big = cache.maybeCreate(0, false, true, parts(5))!;
    const small = cache.maybeCreate(0, false, true, parts(2))!;
    const follower = cache.maybeCreate(0, true, true, parts(1))!;
    expect(cache.maybeCreate(10, false, true, parts(10))).toBeNull();
    const f2 = cache.maybeCreate(10, true, true, parts(1))!;
    expect(f2).not.toBeNull();
    expect(cache.get(small.id)).toBeUndefined();
    expect(cache.get(big.id)).toBe(big);
    const f3 = cache.maybeCreate(20, true, true, parts(1))!;
    expect(cache.get(big.id)).toBeUndefined();
    // Only followers' sessions are left, all recent: no one may take their slots.
    expect(cache.maybeCreate(30, true, true, parts(100))).toBeNull();
    expect([cache.get(follower.id), cache.get(f2.id), cache.get(f3.id)]).toEqual([follower, f2, f3]);
    expect(cache.evictions).toBe(2);
  });

  it('evicts the least recently used session once it is unused for longer than the eviction time, privileged or not', () => {
    const cache = new FetchSessionCache(2, EVICTION_MS);
    const a = cache.maybeCreate(0, true, true, parts(9))!;
    const b = cache.maybeCreate(500, true, true, parts(9))!;
    expect(cache.maybeCreate(1000, false, true, parts(1))).toBeNull();
    const c = cache.maybeCreate(1001, false, true, parts(1))!;
    expect(cache.get(a.id)).toBeUndefined();
    expect(cache.get(b.id)).toBe(b);
    expect(cache.get(c.id)).toBe(c);
  });

  it('lets a consumer evict a session created longer ago than the eviction time only with more partitions', () => {
    const cache = new FetchSessionCache(1, EVICTION_MS);
    const a = cache.maybeCreate(0, false, true, parts(2))!;
    // In use (touched now) but old: evictable by all, as of this touch.
    cache.touch(a, 1500);
    expect(cache.maybeCreate(1600, false, true, parts(1))).toBeNull();
    expect(cache.maybeCreate(1600, false, true, parts(2))).toBeNull();
    const b = cache.maybeCreate(1600, false, true, parts(3))!;
    expect(b).not.toBeNull();
    expect(cache.get(a.id)).toBeUndefined();
    // A recent session is not evictable by a consumer whatever its size.
    expect(cache.maybeCreate(1700, false, true, parts(50))).toBeNull();
    expect(cache.size).toBe(1);
    expect(cache.totalPartitions).toBe(3);
  });

  it('decides evictability when a session is touched, as Kafka does', () => {
    const cache = new FetchSessionCache(1, EVICTION_MS);
    cache.maybeCreate(0, false, true, parts(1));
    // Old by now, but not touched since it was created: only staleness could free its slot.
    expect(cache.maybeCreate(1000, false, true, parts(5))).toBeNull();
  });
});
