/**
 * Incremental fetch sessions (KIP-227). A client that sends SessionId 0 / epoch 0 gets a session;
 * later requests carry only changed partitions (and forgotten ones), and the response carries
 * only partitions with something new: records, an error, or a moved high watermark, last stable
 * offset or log start offset (Kafka's FetchSession / CachedPartition.maybeUpdateResponseData).
 *
 * Epoch rules (FetchMetadata): (0, -1) no session; (0, 0) full fetch opening a session; (id, -1)
 * close the session, full sessionless fetch; (id, n>0) incremental, n must be the expected epoch.
 */

export interface SessionPartition {
  readonly topicId: string;
  topicName: string;
  readonly partition: number;
  fetchOffset: number;
  maxBytes: number;
  currentLeaderEpoch: number;
  lastFetchedEpoch: number;
  /** What the client last saw (-1 before the first response). */
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
}

export interface FetchSession {
  readonly id: number;
  /** The epoch the next incremental request must carry. */
  epoch: number;
  /** In request order (key: topicId or name, then partition). */
  readonly partitions: Map<string, SessionPartition>;
  lastUsed: number;
  readonly keyedById: boolean;
}

export const FETCH_SESSION_ID_NOT_FOUND = 70;
export const INVALID_FETCH_SESSION_EPOCH = 71;

export const partitionKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

export class FetchSessionCache {
  private readonly sessions = new Map<number, FetchSession>();

  constructor(
    private readonly maxSlots: number,
    private readonly evictAfterMs = 120_000,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /** A new session, or null when sessions are disabled or every slot holds a recent session. */
  create(keyedById: boolean, now: number): FetchSession | null {
    if (this.maxSlots <= 0) return null;
    if (this.sessions.size >= this.maxSlots) {
      let oldest: FetchSession | null = null;
      for (const s of this.sessions.values()) if (!oldest || s.lastUsed < oldest.lastUsed) oldest = s;
      if (!oldest || now - oldest.lastUsed < this.evictAfterMs) return null;
      this.sessions.delete(oldest.id);
    }
    let id = 0;
    while (id === 0 || this.sessions.has(id)) id = 1 + Math.floor(Math.random() * 0x7ffffffe);
    const s: FetchSession = { id, epoch: 1, partitions: new Map(), lastUsed: now, keyedById };
    this.sessions.set(id, s);
    return s;
  }

  get(id: number): FetchSession | undefined {
    return this.sessions.get(id);
  }

  remove(id: number): void {
    this.sessions.delete(id);
  }
}
