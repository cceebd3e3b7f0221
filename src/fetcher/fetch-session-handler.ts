/**
 * The client side of a fetch session (KIP-227) with one source broker, Kafka's
 * `FetchSessionHandler`: the first request is full (session id 0, epoch 0) and the broker answers
 * with a session id; later requests are incremental, carrying only partitions whose fetch offset,
 * leader epoch, last fetched epoch or max bytes changed (Kafka compares whole PartitionData), and
 * naming removed partitions as forgotten. The epoch goes
 * up by one per answered request and wraps to 1 (Kafka's `FetchMetadata.nextEpoch`).
 *
 * FETCH_SESSION_ID_NOT_FOUND or INVALID_FETCH_SESSION_EPOCH drops the session: the response is
 * ignored and the next request is full again. A failed request (no answer) must `reset` too.
 *
 * Concurrency contract: one request in flight per session (the broker loop awaits each).
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import type { FetchPartitionRequest, FetchRequest } from './source-endpoint.js';

/** What the session needs to know of a partition to fetch. */
export interface SessionPartition {
  readonly key: string;
  readonly tp: { readonly topicId: string; readonly partition: number };
  readonly fetchOffset: number;
  readonly lastFetchedEpoch: number;
  readonly sourceLeaderEpoch: number;
  readonly maxBytes: number;
  /** -1 until a response named the partition (a partition added again after a pause, say). */
  readonly sourceHighWatermark?: number;
}

interface SessionLimits {
  readonly maxWaitMs: number;
  readonly minBytes: number;
  readonly maxBytes: number;
}

interface Sent {
  readonly topicId: string;
  readonly partition: number;
  readonly fetchOffset: number;
  readonly lastFetchedEpoch: number;
  readonly leaderEpoch: number;
  readonly maxBytes: number;
}

/** Kafka's FetchMetadata.INITIAL_EPOCH and the epoch after the initial request. */
const INITIAL_EPOCH = 0;
const FIRST_INCREMENTAL_EPOCH = 1;
const MAX_EPOCH = 0x7fffffff;

export class FetchSessionHandler {
  private sessionId = 0;
  private epoch = INITIAL_EPOCH;
  private sent = new Map<string, Sent>();
  private pendingSent = new Map<string, Sent>();
  private lastWasFull = true;

  /**
   * Where the request in flight asks `key` to be read from (the partitions it names and those
   * the session carries unchanged); undefined when the partition is not in it.
   */
  requested(key: string): { readonly fetchOffset: number } | undefined {
    return this.pendingSent.get(key);
  }

  get isIncremental(): boolean {
    return this.sessionId !== 0;
  }

  /** The next request for exactly `parts` (the partitions the loop wants now). */
  build(parts: readonly SessionPartition[], limits: SessionLimits): FetchRequest {
    // A partition added again while the session still holds it unchanged (removed and re-added
    // with no request in between: a pause and resume) would be left out of the request, and the
    // source answers an incremental request only with what changed: its high watermark, hence
    // its lag, would stay unknown until the source gets a new record. A full request answers
    // every partition.
    if (this.sessionId !== 0 && parts.some((p) => p.sourceHighWatermark === -1 && this.unchanged(p))) this.reset();
    const full = this.sessionId === 0;
    this.lastWasFull = full;
    const byTopic = new Map<string, FetchPartitionRequest[]>();
    const wanted = new Set<string>();
    for (const p of parts) {
      wanted.add(p.key);
      if (!full && this.unchanged(p)) continue;
      let list = byTopic.get(p.tp.topicId);
      if (list === undefined) byTopic.set(p.tp.topicId, (list = []));
      list.push({ partition: p.tp.partition, currentLeaderEpoch: p.sourceLeaderEpoch, fetchOffset: p.fetchOffset, lastFetchedEpoch: p.lastFetchedEpoch, partitionMaxBytes: p.maxBytes });
    }
    const forgotten = new Map<string, number[]>();
    if (!full) {
      for (const [k, v] of this.sent) {
        if (wanted.has(k)) continue;
        let list = forgotten.get(v.topicId);
        if (list === undefined) forgotten.set(v.topicId, (list = []));
        list.push(v.partition);
      }
    }
    const next = new Map<string, Sent>();
    for (const p of parts) next.set(p.key, { topicId: p.tp.topicId, partition: p.tp.partition, fetchOffset: p.fetchOffset, lastFetchedEpoch: p.lastFetchedEpoch, leaderEpoch: p.sourceLeaderEpoch, maxBytes: p.maxBytes });
    this.pendingSent = next;
    return {
      maxWaitMs: limits.maxWaitMs,
      minBytes: limits.minBytes,
      maxBytes: limits.maxBytes,
      sessionId: this.sessionId,
      sessionEpoch: full ? INITIAL_EPOCH : this.epoch,
      topics: [...byTopic].map(([topicId, partitions]) => ({ topicId, partitions })),
      forgotten: [...forgotten].map(([topicId, partitions]) => ({ topicId, partitions })),
    };
  }

  /** The session already holds `p` with these parameters: an incremental request leaves it out. */
  private unchanged(p: SessionPartition): boolean {
    const prev = this.sent.get(p.key);
    return prev !== undefined && prev.fetchOffset === p.fetchOffset && prev.lastFetchedEpoch === p.lastFetchedEpoch && prev.leaderEpoch === p.sourceLeaderEpoch && prev.maxBytes === p.maxBytes;
  }

  /** Takes the top-level answer; false when the session was lost and the response must be ignored. */
  handle(errorCode: number, sessionId: number): boolean {
    if (errorCode === ErrorCode.FETCH_SESSION_ID_NOT_FOUND || errorCode === ErrorCode.INVALID_FETCH_SESSION_EPOCH) {
      this.reset();
      return false;
    }
    if (errorCode !== ErrorCode.NONE) return true;
    if (this.lastWasFull) {
      this.sessionId = sessionId;
      this.epoch = FIRST_INCREMENTAL_EPOCH;
    } else {
      this.epoch = this.epoch >= MAX_EPOCH ? FIRST_INCREMENTAL_EPOCH : this.epoch + 1;
    }
    // A broker that answers a full request with session id 0 keeps no session: stay full.
    this.sent = this.sessionId === 0 ? new Map() : this.pendingSent;
    return true;
  }

  reset(): void {
    this.sessionId = 0;
    this.epoch = INITIAL_EPOCH;
    this.sent.clear();
  }
}
