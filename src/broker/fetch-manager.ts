/**
 * How a Fetch request opens, continues and closes its KIP-227 session, as Kafka's
 * FetchManager.newContext and the FetchContext kinds decide it, and which partitions each kind of
 * response carries.
 *
 * By (SessionId, SessionEpoch), FetchMetadata's rules:
 * - (any, 0) full: the session named, if any, is closed, and a new one is opened after the read
 *   (none when the cache has no slot this fetcher may take): Kafka's "close-and-new".
 * - (any, -1) full and sessionless: the session named, if any, is closed; none is opened.
 * - (X, n) otherwise incremental: X unknown (session id 0 included) → FETCH_SESSION_ID_NOT_FOUND;
 *   n not the epoch X expects → INVALID_FETCH_SESSION_EPOCH (X kept); a v13+ request on a session
 *   opened by name, or the other way round → FETCH_SESSION_TOPIC_ID_ERROR. Else the request's
 *   partitions are added or updated, the forgotten ones removed; a session left empty is closed
 *   and the request answered sessionless; else X expects n+1 next.
 * Session errors answer with session id 0 and no partitions (SessionErrorContext).
 *
 * Full and sessionless responses list every requested partition; incremental ones only those with
 * records, an error, a diverging epoch, a high watermark or log start offset other than the one
 * last sent (CachedPartition.maybeUpdateResponseData), or a new MirrorLeaderEpoch (KIP-1279).
 */
import type { Logger } from '../common/logger.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { FetchSessionErrors } from './fetch-session-errors.js';
import { FetchSessionCache, nextEpoch, type CachedPartition, type FetchSession } from './fetch-session.js';

export type FetchContext =
  | { readonly kind: 'error'; readonly errorCode: number }
  | { readonly kind: 'sessionless'; readonly partitions: CachedPartition[] }
  | { readonly kind: 'full'; readonly partitions: CachedPartition[]; readonly privileged: boolean; readonly usesTopicIds: boolean }
  | { readonly kind: 'incremental'; readonly session: FetchSession; readonly partitions: CachedPartition[]; readonly expectedEpoch: number };

export interface SessionRequest {
  readonly version: number;
  readonly sessionId: number;
  readonly epoch: number;
  /** Replica id >= 0: a follower, whose sessions are privileged in the cache. */
  readonly isFollower: boolean;
  /** The request's partitions, in request order. */
  readonly partitions: CachedPartition[];
  /** Session keys (see `key`) of the forgotten partitions. */
  readonly forgotten: readonly string[];
  readonly clientId: string | null;
  readonly client: string;
}

/** What the read gave for one partition, as far as the session cares. */
export interface PartitionResult {
  readonly errorCode: number;
  readonly recordBytes: number;
  readonly diverging: boolean;
  readonly highWatermark: number;
  readonly logStartOffset: number;
  /** The MirrorLeaderEpoch the response carries; -1 when none. */
  readonly mirrorEpoch: number;
}

interface FetchManagerOptions {
  /** max.incremental.fetch.session.cache.slots */
  readonly maxSlots: number;
  /** min.incremental.fetch.session.eviction.ms (a constant, 120000, in Kafka). */
  readonly evictionMs?: number;
  readonly log: Logger;
  readonly now?: () => number;
}

export class FetchManager {
  readonly cache: FetchSessionCache;
  readonly errors: FetchSessionErrors;
  private readonly now: () => number;

  constructor(opts: FetchManagerOptions) {
    this.cache = new FetchSessionCache(opts.maxSlots, opts.evictionMs ?? 120_000);
    this.now = opts.now ?? Date.now;
    this.errors = new FetchSessionErrors(opts.log, 10_000, this.now);
  }

  /** The session key of a partition: by topic id in sessions that use ids, else by name. */
  static key(usesTopicIds: boolean, p: { topicId: string; topicName: string; partition: number }): string {
    return `${usesTopicIds ? p.topicId : p.topicName}\u0000${p.partition}`;
  }

  newContext(r: SessionRequest): FetchContext {
    if (r.version < 7) return { kind: 'sessionless', partitions: r.partitions };
    if (r.epoch === 0 || r.epoch === -1) {
      // Any session a full request names is closed.
      if (r.sessionId !== 0) this.cache.remove(r.sessionId);
      return r.epoch === -1
        ? { kind: 'sessionless', partitions: r.partitions }
        : { kind: 'full', partitions: r.partitions, privileged: r.isFollower, usesTopicIds: r.version >= 13 };
    }
    const s = this.cache.get(r.sessionId);
    if (s === undefined) return this.fail(ErrorCode.FETCH_SESSION_ID_NOT_FOUND, r);
    if (s.epoch !== r.epoch) return this.fail(ErrorCode.INVALID_FETCH_SESSION_EPOCH, r, s.epoch);
    if (s.usesTopicIds !== r.version >= 13) return this.fail(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR, r, s.epoch);
    for (const p of r.partitions) {
      const k = FetchManager.key(s.usesTopicIds, p);
      const cached = s.partitions.get(k);
      if (cached === undefined) {
        s.partitions.set(k, p);
        continue;
      }
      cached.fetchOffset = p.fetchOffset;
      cached.maxBytes = p.maxBytes;
      cached.currentLeaderEpoch = p.currentLeaderEpoch;
      cached.lastFetchedEpoch = p.lastFetchedEpoch;
      cached.mirrorLeaderEpoch = p.mirrorLeaderEpoch;
    }
    for (const k of r.forgotten) s.partitions.delete(k);
    if (s.partitions.size === 0) {
      this.cache.remove(s.id);
      return { kind: 'sessionless', partitions: r.partitions };
    }
    this.cache.touch(s, this.now());
    s.epoch = nextEpoch(s.epoch);
    return { kind: 'incremental', session: s, partitions: [...s.partitions.values()], expectedEpoch: s.epoch };
  }

  /**
   * After the read of a full request: opens its session with what the response sent
   * (FullFetchContext.updateAndGenerateResponseData); the session id to answer with, 0 for none.
   */
  openSession(c: Extract<FetchContext, { kind: 'full' }>, results: readonly PartitionResult[]): number {
    const map = new Map<string, CachedPartition>();
    c.partitions.forEach((p, i) => {
      const res = results[i];
      if (res !== undefined) remember(p, res);
      map.set(FetchManager.key(c.usesTopicIds, p), p);
    });
    return this.cache.maybeCreate(this.now(), c.privileged, c.usesTopicIds, map)?.id ?? 0;
  }

  /**
   * After the read of an incremental request: which partitions the response carries (by index),
   * updating what the session remembers, or an error when another request moved the session's
   * epoch meanwhile (IncrementalFetchContext: "possible duplicate request").
   */
  selectIncremental(c: Extract<FetchContext, { kind: 'incremental' }>, results: readonly PartitionResult[], r: SessionRequest): number[] | { errorCode: number } {
    const s = c.session;
    if (s.epoch !== c.expectedEpoch) {
      this.errors.record(ErrorCode.INVALID_FETCH_SESSION_EPOCH, { sessionId: r.sessionId, epoch: r.epoch, expectedEpoch: s.epoch, clientId: r.clientId, client: r.client });
      return { errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH };
    }
    const selected: number[] = [];
    c.partitions.forEach((p, i) => {
      const res = results[i];
      if (res === undefined || !mustRespond(p, res)) return;
      selected.push(i);
      // A partition that returned records goes to the back of the session order, so the others
      // get their turn at the response size first (KIP-227 fairness).
      if (res.recordBytes > 0) s.moveLast(FetchManager.key(s.usesTopicIds, p));
    });
    return selected;
  }

  private fail(errorCode: number, r: SessionRequest, expectedEpoch?: number): FetchContext {
    this.errors.record(errorCode, {
      sessionId: r.sessionId,
      epoch: r.epoch,
      ...(expectedEpoch === undefined ? {} : { expectedEpoch }),
      clientId: r.clientId,
      client: r.client,
    });
    return { kind: 'error', errorCode };
  }
}

function remember(p: CachedPartition, res: PartitionResult): void {
  p.highWatermark = res.highWatermark;
  p.logStartOffset = res.logStartOffset;
  if (res.mirrorEpoch >= 0) p.sentMirrorLeaderEpoch = res.mirrorEpoch;
}

/** CachedPartition.maybeUpdateResponseData with the update on, plus the MirrorLeaderEpoch news. */
function mustRespond(p: CachedPartition, res: PartitionResult): boolean {
  let must = res.recordBytes > 0 || res.diverging;
  if (p.highWatermark !== res.highWatermark) {
    must = true;
    p.highWatermark = res.highWatermark;
  }
  if (p.logStartOffset !== res.logStartOffset) {
    must = true;
    p.logStartOffset = res.logStartOffset;
  }
  if (res.mirrorEpoch >= 0 && res.mirrorEpoch !== p.sentMirrorLeaderEpoch) {
    must = true;
    p.sentMirrorLeaderEpoch = res.mirrorEpoch;
  }
  if (res.errorCode !== ErrorCode.NONE) {
    // Sent again once the error is gone, whatever the high watermark then.
    p.highWatermark = -1;
    must = true;
  }
  return must;
}
