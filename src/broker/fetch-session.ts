/**
 * Incremental fetch sessions (KIP-227): the session and the broker's cache of them, as Kafka's
 * FetchSession and FetchSessionCacheShard keep them. How requests open, continue and close
 * sessions is fetch-manager.ts.
 *
 * Concurrency: one event loop; a session is read and changed only between awaits.
 */

/** One partition a session remembers: the fetcher's request parameters and what it was last sent. */
export interface CachedPartition {
  readonly topicId: string;
  topicName: string;
  readonly partition: number;
  fetchOffset: number;
  maxBytes: number;
  currentLeaderEpoch: number;
  lastFetchedEpoch: number;
  /** The high watermark last sent; -1 before the first response and after an error. */
  highWatermark: number;
  /** The log start offset last sent. */
  logStartOffset: number;
  /** The follower's MirrorLeaderEpoch (KIP-1279 §9.6) from the latest request naming it; -1 when absent. */
  mirrorLeaderEpoch: number;
  /** The MirrorLeaderEpoch last sent for this partition; -1 before. */
  sentMirrorLeaderEpoch: number;
}

/** FetchMetadata.nextEpoch: the epoch after `epoch`, wrapping to 1 after the largest int32. */
export const nextEpoch = (epoch: number): number => (epoch < 0 ? epoch : epoch === 0x7fffffff ? 1 : epoch + 1);

export class FetchSession {
  /** The epoch the next incremental request must carry. */
  epoch = 1;
  lastUsedMs: number;
  /** The size the cache last saw (Kafka's cachedSize); -1 while not in a cache. */
  cachedSize = -1;
  /** Whether a session of a follower may evict this one, as of the last touch (evictableByPrivileged). */
  evictableByPrivileged = false;
  /** Whether any new session may evict this one, as of the last touch (evictableByAll). */
  evictableByAll = false;

  constructor(
    readonly id: number,
    /** Sessions of followers are privileged; consumers' are not. */
    readonly privileged: boolean,
    /** In session order: a partition that returned records moves to the end (fairness). */
    readonly partitions: Map<string, CachedPartition>,
    /** Opened by a v13+ request: partitions are keyed by topic id, not by name. */
    readonly usesTopicIds: boolean,
    readonly creationMs: number,
  ) {
    this.lastUsedMs = creationMs;
  }

  /** Moves a partition to the end of the session order. */
  moveLast(key: string): void {
    const p = this.partitions.get(key);
    if (p === undefined) return;
    this.partitions.delete(key);
    this.partitions.set(key, p);
  }
}

/** Orders sessions for eviction as Kafka's EvictableKey does: unprivileged first, then fewer partitions, then lower id. */
function compareEvictable(a: { privileged: boolean; size: number; id: number }, b: { privileged: boolean; size: number; id: number }): number {
  if (a.privileged !== b.privileged) return a.privileged ? 1 : -1;
  if (a.size !== b.size) return a.size - b.size;
  return a.id - b.id;
}

/**
 * The sessions of one node, at most `maxEntries` (max.incremental.fetch.session.cache.slots).
 * When it is full, a new session may take the place of one that is stale (unused for longer than
 * `evictionMs`), else of the least valuable evictable one (FetchSessionCacheShard.tryEvict):
 * a follower's session may evict a consumer's session, or any session created more than
 * `evictionMs` ago, whose key is not greater than its own; a consumer's session may evict only a
 * session created more than `evictionMs` ago with a key not greater than its own. Membership in
 * the evictable sets is decided when a session is touched, as in Kafka.
 *
 * Kafka splits its slots over 8 shards (KafkaBroker.NumFetchSessionCacheShards) to spread lock
 * contention over its request threads; one event loop has none, so this is one cache of all slots.
 */
export class FetchSessionCache {
  private readonly sessions = new Map<number, FetchSession>();
  private evicted = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly evictionMs = 120_000,
    private readonly random: () => number = Math.random,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /** Sessions evicted to make room since start (Kafka's IncrementalFetchSessionEvictionsPerSec). */
  get evictions(): number {
    return this.evicted;
  }

  /** The number of partitions cached over all sessions (NumIncrementalFetchPartitionsCached). */
  get totalPartitions(): number {
    let n = 0;
    for (const s of this.sessions.values()) n += s.cachedSize;
    return n;
  }

  get(id: number): FetchSession | undefined {
    return this.sessions.get(id);
  }

  /** Removes a session; true when it was there. */
  remove(id: number): boolean {
    const s = this.sessions.get(id);
    if (s === undefined) return false;
    this.sessions.delete(id);
    s.cachedSize = -1;
    return true;
  }

  /**
   * A new session holding `partitions`, or null when every slot is taken by a session this one may
   * not evict (FetchSessionCacheShard.maybeCreateSession). The new session expects epoch 1 next.
   */
  maybeCreate(now: number, privileged: boolean, usesTopicIds: boolean, partitions: Map<string, CachedPartition>): FetchSession | null {
    if (this.sessions.size >= this.maxEntries && !this.tryEvict(privileged, partitions.size, now)) return null;
    let id = 0;
    while (id === 0 || this.sessions.has(id)) id = 1 + Math.floor(this.random() * 0x7ffffffe);
    const s = new FetchSession(id, privileged, partitions, usesTopicIds, now);
    this.sessions.set(id, s);
    this.touch(s, now);
    return s;
  }

  /** Records a use of the session: its last-used time, size and evictability. */
  touch(s: FetchSession, now: number): void {
    s.lastUsedMs = now;
    s.cachedSize = s.partitions.size;
    const old = now - s.creationMs > this.evictionMs;
    s.evictableByPrivileged = !s.privileged || old;
    s.evictableByAll = old;
  }

  private tryEvict(privileged: boolean, size: number, now: number): boolean {
    let stalest: FetchSession | undefined;
    for (const s of this.sessions.values()) {
      if (stalest === undefined || s.lastUsedMs < stalest.lastUsedMs || (s.lastUsedMs === stalest.lastUsedMs && s.id < stalest.id)) stalest = s;
    }
    if (stalest === undefined) return false;
    if (now - stalest.lastUsedMs > this.evictionMs) return this.evict(stalest);
    let least: FetchSession | undefined;
    for (const s of this.sessions.values()) {
      if (!(privileged ? s.evictableByPrivileged : s.evictableByAll)) continue;
      if (least === undefined || compareEvictable(keyOf(s), keyOf(least)) < 0) least = s;
    }
    if (least === undefined || compareEvictable({ privileged, size, id: 0 }, keyOf(least)) < 0) return false;
    return this.evict(least);
  }

  private evict(s: FetchSession): boolean {
    this.remove(s.id);
    this.evicted++;
    return true;
  }
}

const keyOf = (s: FetchSession): { privileged: boolean; size: number; id: number } => ({ privileged: s.privileged, size: s.cachedSize, id: s.id });
