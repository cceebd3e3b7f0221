/**
 * The mirror fetcher: the hot path of cluster mirroring (KIP-1279 spec §8.3, §9.4, §9.5).
 *
 * Shape follows Kafka's AbstractFetcherThread: per-partition fetch state (truncating → fetching,
 * delayed after errors), one loop per source broker with exactly one Fetch in flight, and an
 * exhaustive per-partition error table so one partition's failure never stops the others.
 *
 * Per partition the Fetch response's `records` is a slice of the response frame. Only batch
 * headers are read (length, partition leader epoch, offsets); the slice of whole batches goes to
 * `appendAsMirror` as is, so offsets, epochs and bytes stay the source's. No record is decoded:
 * `stats.recordsDecoded` exists to prove it and stays 0.
 *
 * Concurrency contract: single event loop. Appends to one partition are serialised (the loop
 * awaits them before the next Fetch for that broker); `removePartitions` resolves only after any
 * append in progress for those partitions finished, so the caller may truncate or write markers
 * right after.
 */
import { readOffset } from '../protocol/record-batch.js';
import type { MirrorLog } from '../mirror/mirror-host.js';
import type { SourceEndpoint } from './source-endpoint.js';
import type { FetchPartitionResponse, FetchRequest } from './source-protocol.js';
import { channel } from 'node:diagnostics_channel';

/** Mirror fetch progress, observed by src/metrics (the channel names are in src/metrics/channels.ts). */
const mirrorFetchChannel = channel('fjord:mirror-fetch');

/** Kafka error codes the fetcher reacts to. */
const E = {
  NONE: 0,
  OFFSET_OUT_OF_RANGE: 1,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  LEADER_NOT_AVAILABLE: 5,
  NOT_LEADER_OR_FOLLOWER: 6,
  REPLICA_NOT_AVAILABLE: 9,
  NOT_ENOUGH_REPLICAS: 19,
  KAFKA_STORAGE_ERROR: 56,
  FETCH_SESSION_ID_NOT_FOUND: 70,
  INVALID_FETCH_SESSION_EPOCH: 71,
  FENCED_LEADER_EPOCH: 74,
  UNKNOWN_LEADER_EPOCH: 75,
  OFFSET_NOT_AVAILABLE: 78,
  UNKNOWN_TOPIC_ID: 100,
  INCONSISTENT_TOPIC_ID: 103,
} as const;

const RETRIABLE_LEADER_ERRORS: ReadonlySet<number> = new Set([
  E.LEADER_NOT_AVAILABLE,
  E.NOT_LEADER_OR_FOLLOWER,
  E.REPLICA_NOT_AVAILABLE,
  E.KAFKA_STORAGE_ERROR,
  E.FENCED_LEADER_EPOCH,
  E.UNKNOWN_LEADER_EPOCH,
  E.OFFSET_NOT_AVAILABLE,
  E.NOT_ENOUGH_REPLICAS,
]);

/** Smallest valid magic-2 batch: 61-byte header, no records. */
const BATCH_HEADER_SIZE = 61;
/** Proactive bump when a source epoch comes within this distance of the destination epoch (§9.4). */
export const LEADER_EPOCH_BUMP_THRESHOLD = 3;
/** Bump target: MinLeaderEpoch = source epoch + 10, the controller adds 1 (§9.4). */
export const LEADER_EPOCH_BUMP_INCREMENT = 10;

export interface MirrorTopicPartition {
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
}

export function tpKey(tp: MirrorTopicPartition): string {
  return `${tp.topicId}:${tp.partition}`;
}

export interface MirrorFetcherCallbacks {
  /** The local log of a mirror partition led here. */
  log(tp: MirrorTopicPartition): MirrorLog | undefined;
  /** Current destination leader epoch of the partition (from the node's image). */
  destinationLeaderEpoch(tp: MirrorTopicPartition): number;
  /**
   * A batch carried an epoch above the destination leader epoch: the partition was removed from
   * the fetcher; the coordinator moves it to EPOCH_FENCING (bump, then MIRRORING re-adds it).
   */
  onEpochFenced(tp: MirrorTopicPartition, sourceEpoch: number): void;
  /** Asks for an asynchronous bump to at least `minLeaderEpoch + 1` (BumpLeaderEpochs). */
  requestEpochBump(tp: MirrorTopicPartition, minLeaderEpoch: number): void;
  /** The partition was removed from the fetcher after an error; the state machine takes over. */
  onPartitionFailed(tp: MirrorTopicPartition, err: Error, nonRetryable: boolean): void;
  /** Data appended (retry counting may start over). */
  onProgress?(tp: MirrorTopicPartition): void;
}

export interface MirrorFetcherConfig {
  /** mirror.fetch.wait.max.ms */
  readonly maxWaitMs: number;
  /** mirror.fetch.min.bytes */
  readonly minBytes: number;
  /** mirror.fetch.response.max.bytes */
  readonly maxBytes: number;
  /** mirror.fetch.max.bytes (per partition) */
  readonly partitionMaxBytes: number;
  /** mirror.fetch.backoff.ms */
  readonly backoffMs: number;
  /** A partition that cannot reach its source leader for this long goes FAILED (retried later). */
  readonly unreachableFailMs: number;
}

export const DEFAULT_FETCHER_CONFIG: MirrorFetcherConfig = {
  maxWaitMs: 1000,
  minBytes: 1,
  maxBytes: 10 * 1024 * 1024,
  partitionMaxBytes: 1024 * 1024,
  backoffMs: 1000,
  unreachableFailMs: 30_000,
};

type FetchState = 'truncating' | 'fetching' | 'delayed';

interface PartitionState {
  readonly tp: MirrorTopicPartition;
  readonly key: string;
  state: FetchState;
  fetchOffset: number;
  sourceLeaderId: number;
  sourceLeaderEpoch: number;
  sourceHighWatermark: number;
  sourceLogStartOffset: number;
  delayedUntil: number;
  /** Since when the partition has not been able to talk to its source leader (0 = fine). */
  unreachableSince: number;
  maxBytes: number;
  bumpRequestedFor: number;
  missingTopicCount: number;
  busy: Promise<void>;
  lastError?: Error;
}

export interface PartitionFetchStatus {
  readonly state: FetchState;
  readonly fetchOffset: number;
  readonly sourceHighWatermark: number;
  readonly localHighWatermark: number;
  readonly lag: number;
  readonly sourceLeaderId: number;
  readonly sourceLeaderEpoch: number;
}

export interface MirrorFetcherStats {
  fetches: number;
  batchesAppended: number;
  bytesAppended: number;
  /** Records decoded on the mirror path. Nothing here decodes records, so it stays 0. */
  readonly recordsDecoded: number;
}

/** Fetch session bookkeeping for one source broker (KIP-227, client side). */
class FetchSession {
  private sessionId = 0;
  private epoch = 0;
  private sent = new Map<string, { fetchOffset: number; leaderEpoch: number; maxBytes: number; topicId: string; partition: number }>();
  private lastWasFull = true;

  build(parts: readonly PartitionState[], cfg: MirrorFetcherConfig): FetchRequest {
    const full = this.sessionId === 0;
    this.lastWasFull = full;
    const byTopic = new Map<string, { partition: number; currentLeaderEpoch: number; fetchOffset: number; partitionMaxBytes: number }[]>();
    const wanted = new Set<string>();
    for (const p of parts) {
      wanted.add(p.key);
      const prev = this.sent.get(p.key);
      if (!full && prev !== undefined && prev.fetchOffset === p.fetchOffset && prev.leaderEpoch === p.sourceLeaderEpoch && prev.maxBytes === p.maxBytes) continue;
      let list = byTopic.get(p.tp.topicId);
      if (list === undefined) byTopic.set(p.tp.topicId, (list = []));
      list.push({ partition: p.tp.partition, currentLeaderEpoch: p.sourceLeaderEpoch, fetchOffset: p.fetchOffset, partitionMaxBytes: p.maxBytes });
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
    const next = new Map<string, { fetchOffset: number; leaderEpoch: number; maxBytes: number; topicId: string; partition: number }>();
    for (const p of parts) next.set(p.key, { fetchOffset: p.fetchOffset, leaderEpoch: p.sourceLeaderEpoch, maxBytes: p.maxBytes, topicId: p.tp.topicId, partition: p.tp.partition });
    this.pendingSent = next;
    return {
      maxWaitMs: cfg.maxWaitMs,
      minBytes: cfg.minBytes,
      maxBytes: cfg.maxBytes,
      sessionId: this.sessionId,
      sessionEpoch: full ? 0 : this.epoch,
      topics: [...byTopic].map(([topicId, partitions]) => ({ topicId, partitions })),
      forgotten: [...forgotten].map(([topicId, partitions]) => ({ topicId, partitions })),
    };
  }

  private pendingSent = new Map<string, { fetchOffset: number; leaderEpoch: number; maxBytes: number; topicId: string; partition: number }>();

  /** Returns false when the session was lost and the response must be ignored. */
  handle(errorCode: number, sessionId: number): boolean {
    if (errorCode === E.FETCH_SESSION_ID_NOT_FOUND || errorCode === E.INVALID_FETCH_SESSION_EPOCH) {
      this.reset();
      return false;
    }
    if (errorCode !== 0) return true;
    if (this.lastWasFull) {
      this.sessionId = sessionId;
      this.epoch = 1;
    } else {
      this.epoch = this.epoch >= 0x7fffffff ? 1 : this.epoch + 1;
    }
    this.sent = this.sessionId === 0 ? new Map() : this.pendingSent;
    return true;
  }

  reset(): void {
    this.sessionId = 0;
    this.epoch = 0;
    this.sent.clear();
  }

  get isIncremental(): boolean {
    return this.sessionId !== 0;
  }
}

class BrokerLoop {
  readonly session = new FetchSession();
  private wake: (() => void) | null = null;
  running = true;

  constructor(
    readonly brokerId: number,
    private readonly fetcher: MirrorFetcher,
  ) {}

  notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  async run(): Promise<void> {
    while (this.running) {
      try {
        const waitMs = await this.fetcher.runOnce(this);
        if (waitMs > 0 && this.running) await this.sleep(waitMs);
      } catch {
        if (this.running) await this.sleep(this.fetcher.config.backoffMs);
      }
    }
  }
}

export class MirrorFetcher {
  readonly config: MirrorFetcherConfig;
  private readonly partitions = new Map<string, PartitionState>();
  private readonly loops = new Map<number, BrokerLoop>();
  private metadataRefresh: Promise<void> | null = null;
  private closed = false;
  readonly stats: MirrorFetcherStats = { fetches: 0, batchesAppended: 0, bytesAppended: 0, recordsDecoded: 0 };

  constructor(
    private readonly endpoint: SourceEndpoint,
    private readonly cb: MirrorFetcherCallbacks,
    config: Partial<MirrorFetcherConfig> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.config = { ...DEFAULT_FETCHER_CONFIG, ...config };
  }

  /**
   * Starts fetching partitions. Each starts in the truncating state: OffsetsForLeaderEpoch with the
   * local latest epoch finds where the local log diverges from the source (§9.5).
   */
  addPartitions(tps: readonly MirrorTopicPartition[]): void {
    for (const tp of tps) {
      const key = tpKey(tp);
      if (this.partitions.has(key)) continue;
      const log = this.cb.log(tp);
      this.partitions.set(key, {
        tp,
        key,
        state: 'truncating',
        fetchOffset: log?.logEndOffset ?? 0,
        sourceLeaderId: -1,
        sourceLeaderEpoch: -1,
        sourceHighWatermark: -1,
        sourceLogStartOffset: -1,
        delayedUntil: 0,
        unreachableSince: 0,
        maxBytes: this.config.partitionMaxBytes,
        bumpRequestedFor: -1,
        missingTopicCount: 0,
        busy: Promise.resolve(),
      });
    }
    void this.refreshMetadata();
  }

  /** Stops fetching partitions; resolves once no append for them is in progress. */
  async removePartitions(tps: readonly MirrorTopicPartition[]): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const tp of tps) {
      const ps = this.partitions.get(tpKey(tp));
      if (ps === undefined) continue;
      this.partitions.delete(ps.key);
      waits.push(ps.busy);
    }
    await Promise.all(waits);
  }

  has(tp: MirrorTopicPartition): boolean {
    return this.partitions.has(tpKey(tp));
  }

  status(tp: MirrorTopicPartition): PartitionFetchStatus | undefined {
    const ps = this.partitions.get(tpKey(tp));
    if (ps === undefined) return undefined;
    const localHw = this.cb.log(tp)?.highWatermark ?? 0;
    return {
      state: ps.state,
      fetchOffset: ps.fetchOffset,
      sourceHighWatermark: ps.sourceHighWatermark,
      localHighWatermark: localHw,
      lag: ps.sourceHighWatermark < 0 ? -1 : Math.max(0, ps.sourceHighWatermark - localHw),
      sourceLeaderId: ps.sourceLeaderId,
      sourceLeaderEpoch: ps.sourceLeaderEpoch,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.unassignedTimer !== null) clearTimeout(this.unassignedTimer);
    for (const l of this.loops.values()) {
      l.running = false;
      l.notify();
    }
    const busy = [...this.partitions.values()].map((p) => p.busy);
    this.partitions.clear();
    await Promise.all(busy);
  }

  /** One round of a broker loop; returns how long to sleep before the next. */
  async runOnce(loop: BrokerLoop): Promise<number> {
    const now = this.now();
    const mine = [...this.partitions.values()].filter((p) => p.sourceLeaderId === loop.brokerId);
    this.failUnreachable(mine, now);
    const ready = mine.filter((p) => p.state !== 'delayed' || p.delayedUntil <= now);
    for (const p of ready) if (p.state === 'delayed') p.state = 'truncating';
    if (ready.length === 0) {
      const next = Math.min(...mine.map((p) => p.delayedUntil - now), this.config.maxWaitMs);
      return Math.max(10, next);
    }
    const truncating = ready.filter((p) => p.state === 'truncating');
    if (truncating.length > 0) {
      await this.truncate(loop, truncating);
      return 0;
    }
    const fetching = ready.filter((p) => p.state === 'fetching');
    if (fetching.length === 0) return 10;
    const req = loop.session.build(fetching, this.config);
    let res;
    try {
      this.stats.fetches++;
      res = await this.endpoint.fetch(loop.brokerId, req);
    } catch (err) {
      loop.session.reset();
      this.delay(fetching, err as Error);
      return this.config.backoffMs;
    }
    if (!loop.session.handle(res.errorCode, res.sessionId)) return 0;
    if (res.errorCode !== E.NONE) {
      this.delay(fetching, new Error(`source fetch error ${res.errorCode}`));
      return this.config.backoffMs;
    }
    const work: Promise<void>[] = [];
    for (const t of res.topics) {
      for (const pr of t.partitions) {
        const ps = this.partitions.get(`${t.topicId}:${pr.partition}`);
        if (ps === undefined || ps.state !== 'fetching') continue;
        work.push(this.serialize(ps, () => this.processPartition(ps, pr)));
      }
    }
    for (const p of fetching) p.unreachableSince = 0;
    await Promise.all(work);
    return 0;
  }

  private serialize(ps: PartitionState, fn: () => Promise<void>): Promise<void> {
    const run = ps.busy.then(fn).catch((err: unknown) => this.failPartition(ps, err as Error, false));
    ps.busy = run;
    return run;
  }

  private async processPartition(ps: PartitionState, pr: FetchPartitionResponse): Promise<void> {
    if (this.partitions.get(ps.key) !== ps) return;
    if (pr.errorCode !== E.NONE) {
      await this.handlePartitionError(ps, pr.errorCode, pr.currentLeaderId, pr.currentLeaderEpoch);
      return;
    }
    ps.sourceHighWatermark = pr.highWatermark;
    ps.sourceLogStartOffset = pr.logStartOffset;
    if (mirrorFetchChannel.hasSubscribers) mirrorFetchChannel.publish({ topic: ps.tp.topic, partition: ps.tp.partition, records: pr.records, sourceHighWatermark: pr.highWatermark });
    const log = this.cb.log(ps.tp);
    if (log === undefined) throw new Error('the local log is gone');
    const dle = this.cb.destinationLeaderEpoch(ps.tp);
    this.maybeBumpProactively(ps, ps.sourceLeaderEpoch, dle);
    const records = pr.records;
    if (records === null || records.length === 0) return;

    // Walk batch headers only; stop at a partial trailing batch or at an epoch we may not append.
    const len = records.length;
    let pos = 0;
    let start = -1;
    let firstBase = -1;
    let lastOffset = -1;
    let maxEpoch = -1;
    let batches = 0;
    let fencedEpoch = -1;
    let staleEpoch = -1;
    while (pos + BATCH_HEADER_SIZE <= len) {
      const batchLength = records.readInt32BE(pos + 8);
      const size = 12 + batchLength;
      if (batchLength < BATCH_HEADER_SIZE - 12) throw new Error(`corrupt batch from the source (length ${batchLength})`);
      if (pos + size > len) {
        // A batch larger than what was asked for: ask for at least its size next time (KIP-74).
        if (start < 0 && size > ps.maxBytes) ps.maxBytes = size;
        break;
      }
      if (records[pos + 16] !== 2) throw new Error(`unsupported record batch magic ${records[pos + 16]} from the source`);
      const base = readOffset(records, pos);
      const last = base + records.readInt32BE(pos + 23);
      if (last < ps.fetchOffset) {
        pos += size;
        continue;
      }
      const epoch = records.readInt32BE(pos + 12);
      if (ps.sourceLeaderEpoch >= 0 && epoch > ps.sourceLeaderEpoch) {
        staleEpoch = epoch;
        break;
      }
      if (epoch > dle) {
        fencedEpoch = epoch;
        break;
      }
      if (start < 0) {
        start = pos;
        firstBase = base;
      }
      if (epoch > maxEpoch) maxEpoch = epoch;
      lastOffset = last;
      batches++;
      pos += size;
    }

    if (start >= 0) {
      if (firstBase < log.logEndOffset) {
        // The first batch straddles our end (our log ends mid-batch, e.g. after a truncation):
        // drop our overlapping batch and fetch again from where our log now ends, so the source's
        // batches land whole and contiguous.
        await log.truncateTo(firstBase);
        ps.fetchOffset = log.logEndOffset;
        if (ps.fetchOffset < firstBase) return;
      }
      const end = start + (lastOffset >= 0 ? this.endOfLastKept(records, start, lastOffset) : 0);
      const slice = records.subarray(start, end);
      const res = await log.appendAsMirror(slice);
      if (res.errorCode !== E.NONE) throw new Error(res.errorMessage ?? `appendAsMirror failed with error ${res.errorCode}`);
      if (this.partitions.get(ps.key) !== ps) return;
      ps.fetchOffset = lastOffset + 1;
      this.stats.batchesAppended += batches;
      this.stats.bytesAppended += slice.length;
      this.cb.onProgress?.(ps.tp);
    }
    if (staleEpoch >= 0) {
      // A batch epoch above the source leader epoch we know: our source metadata is stale
      // (§9.5; older sources bump epochs without a leader change). Refresh before going on.
      await this.refreshMetadata();
      if (this.partitions.get(ps.key) === ps && ps.sourceLeaderEpoch >= 0 && ps.sourceLeaderEpoch < staleEpoch) {
        throw new Error(`source batch epoch ${staleEpoch} is above the source leader epoch ${ps.sourceLeaderEpoch} after a metadata refresh`);
      }
      return;
    }
    if (fencedEpoch >= 0) {
      this.partitions.delete(ps.key);
      this.cb.onEpochFenced(ps.tp, fencedEpoch);
      return;
    }
    this.maybeBumpProactively(ps, maxEpoch, dle);
  }

  /** Byte length from `start` to the end of the batch whose last offset is `lastOffset`. */
  private endOfLastKept(records: Buffer, start: number, lastOffset: number): number {
    let pos = start;
    for (;;) {
      const size = 12 + records.readInt32BE(pos + 8);
      const last = readOffset(records, pos) + records.readInt32BE(pos + 23);
      pos += size;
      if (last >= lastOffset) return pos - start;
    }
  }

  private maybeBumpProactively(ps: PartitionState, sourceEpoch: number, dle: number): void {
    const sle = Math.max(sourceEpoch, ps.sourceLeaderEpoch);
    if (sle < 0 || sle <= dle - LEADER_EPOCH_BUMP_THRESHOLD) return;
    const target = sle + LEADER_EPOCH_BUMP_INCREMENT;
    if (target <= ps.bumpRequestedFor) return;
    ps.bumpRequestedFor = target;
    this.cb.requestEpochBump(ps.tp, target);
  }

  private async handlePartitionError(ps: PartitionState, code: number, leaderId: number, leaderEpoch: number): Promise<void> {
    if (code === E.OFFSET_OUT_OF_RANGE) {
      await this.handleOutOfRange(ps);
      return;
    }
    if (RETRIABLE_LEADER_ERRORS.has(code)) {
      if (leaderId >= 0 && leaderEpoch > ps.sourceLeaderEpoch) {
        // The response names the new leader: re-home without waiting for metadata, and truncate
        // against it first (a new source epoch may mean an unclean election).
        ps.sourceLeaderId = leaderId;
        ps.sourceLeaderEpoch = leaderEpoch;
        ps.state = 'truncating';
        this.ensureLoop(leaderId);
        void this.refreshMetadata();
        return;
      }
      this.delay([ps], new Error(`source error ${code}`));
      return;
    }
    if (code === E.UNKNOWN_TOPIC_ID || code === E.UNKNOWN_TOPIC_OR_PARTITION || code === E.INCONSISTENT_TOPIC_ID) {
      this.delay([ps], new Error(`source error ${code}`));
      return;
    }
    throw new Error(`source returned error ${code} for ${ps.tp.topic}-${ps.tp.partition}`);
  }

  private async handleOutOfRange(ps: PartitionState): Promise<void> {
    const base = { topic: ps.tp.topic, partition: ps.tp.partition, currentLeaderEpoch: ps.sourceLeaderEpoch };
    const res = await this.endpoint.listOffsets(ps.sourceLeaderId, [
      { ...base, timestamp: -2 },
    ]);
    const earliest = res[0];
    const latestRes = await this.endpoint.listOffsets(ps.sourceLeaderId, [{ ...base, timestamp: -1 }]);
    const latest = latestRes[0];
    if (earliest === undefined || latest === undefined || earliest.errorCode !== 0 || latest.errorCode !== 0) {
      this.delay([ps], new Error('ListOffsets failed after OFFSET_OUT_OF_RANGE'));
      return;
    }
    const log = this.cb.log(ps.tp);
    if (log === undefined || this.partitions.get(ps.key) !== ps) return;
    if (ps.fetchOffset < earliest.offset) {
      // The source deleted what we have not copied yet: restart at its log start (§8.3).
      await log.truncateFullyAndStartAt(earliest.offset);
      ps.fetchOffset = earliest.offset;
    } else if (ps.fetchOffset > latest.offset) {
      // Our log is longer than the source's: truncate to the source's end (as a Kafka follower does).
      await log.truncateTo(latest.offset);
      ps.fetchOffset = log.logEndOffset;
    }
  }

  /** OffsetsForLeaderEpoch for partitions in the truncating state (§9.5). */
  private async truncate(loop: BrokerLoop, parts: PartitionState[]): Promise<void> {
    const ask: PartitionState[] = [];
    for (const ps of parts) {
      const log = this.cb.log(ps.tp);
      if (log === undefined) {
        this.failPartition(ps, new Error('the local log is gone'), false);
        continue;
      }
      if (log.latestEpoch < 0) {
        ps.fetchOffset = log.logEndOffset;
        ps.state = 'fetching';
      } else {
        ask.push(ps);
      }
    }
    if (ask.length === 0) return;
    let res;
    try {
      res = await this.endpoint.offsetsForLeaderEpoch(
        loop.brokerId,
        ask.map((ps) => ({
          topic: ps.tp.topic,
          partition: ps.tp.partition,
          currentLeaderEpoch: ps.sourceLeaderEpoch,
          leaderEpoch: this.cb.log(ps.tp)?.latestEpoch ?? -1,
        })),
      );
    } catch (err) {
      this.delay(ask, err as Error);
      return;
    }
    await Promise.all(
      ask.map((ps) =>
        this.serialize(ps, async () => {
          const r = res.find((x) => x.topic === ps.tp.topic && x.partition === ps.tp.partition);
          if (this.partitions.get(ps.key) !== ps) return;
          if (r === undefined) {
            this.delay([ps], new Error('no OffsetsForLeaderEpoch answer'));
            return;
          }
          if (r.errorCode !== 0) {
            await this.handlePartitionError(ps, r.errorCode, -1, -1);
            return;
          }
          const log = this.cb.log(ps.tp);
          if (log === undefined) throw new Error('the local log is gone');
          const leo = log.logEndOffset;
          let target = leo;
          if (r.endOffset < 0 && ps.sourceLeaderEpoch >= 0 && log.latestEpoch > ps.sourceLeaderEpoch) {
            // UNDEFINED: the source knows no epoch at or above ours. Everything we hold at epochs
            // above the source leader's epoch is history the source never had: drop it, then ask
            // again with the epoch we are left with.
            const local = log.endOffsetForEpoch(ps.sourceLeaderEpoch);
            const cut = local.endOffset >= 0 ? local.endOffset : log.logStartOffset;
            if (cut < leo) {
              await log.truncateTo(cut);
              ps.fetchOffset = log.logEndOffset;
              return;
            }
            // Nothing but an epoch marker at our log end (a leader-epoch bump) lies above the
            // source's epochs: no data diverges, fetch from our end. The next mirrored batch
            // replaces the marker in the epoch cache.
          }
          if (r.endOffset >= 0 && r.leaderEpoch >= 0) {
            const requested = log.latestEpoch;
            if (r.leaderEpoch < requested) {
              // The source does not know our latest epoch: our end for the epoch it answered with.
              const local = log.endOffsetForEpoch(r.leaderEpoch);
              target = local.epoch === r.leaderEpoch ? Math.min(r.endOffset, local.endOffset) : local.endOffset;
            } else {
              target = Math.min(r.endOffset, leo);
            }
          }
          if (target >= 0 && target < leo) await log.truncateTo(target);
          ps.fetchOffset = log.logEndOffset;
          ps.state = 'fetching';
          ps.unreachableSince = 0;
        }),
      ),
    );
  }

  private delay(parts: readonly PartitionState[], err: Error): void {
    const now = this.now();
    for (const ps of parts) {
      if (this.partitions.get(ps.key) !== ps) continue;
      ps.state = 'delayed';
      ps.delayedUntil = now + this.config.backoffMs;
      if (ps.unreachableSince === 0) ps.unreachableSince = now;
      ps.lastError = err;
    }
    void this.refreshMetadata();
  }

  private failUnreachable(parts: readonly PartitionState[], now: number): void {
    for (const ps of parts) {
      if (ps.unreachableSince > 0 && now - ps.unreachableSince >= this.config.unreachableFailMs) {
        this.failPartition(ps, new Error(`source leader unreachable for ${now - ps.unreachableSince} ms: ${ps.lastError?.message ?? ''}`), false);
      }
    }
  }

  private failPartition(ps: PartitionState, err: Error, nonRetryable: boolean): void {
    if (this.partitions.get(ps.key) !== ps) return;
    this.partitions.delete(ps.key);
    this.cb.onPartitionFailed(ps.tp, err, nonRetryable);
  }

  /** Refreshes source metadata for every partition's topic; one refresh at a time. */
  refreshMetadata(): Promise<void> {
    if (this.metadataRefresh !== null) return this.metadataRefresh;
    const run = this.doRefreshMetadata()
      .catch((err: unknown) => {
        const now = this.now();
        for (const ps of this.partitions.values()) {
          if (ps.unreachableSince === 0) ps.unreachableSince = now;
          ps.lastError = err as Error;
          if (ps.sourceLeaderId < 0) this.ensureUnassignedRetry();
        }
      })
      .finally(() => {
        this.metadataRefresh = null;
      });
    this.metadataRefresh = run;
    return run;
  }

  private unassignedTimer: NodeJS.Timeout | null = null;

  /** Partitions with no known source leader have no loop: retry metadata on a timer for them. */
  private ensureUnassignedRetry(): void {
    if (this.unassignedTimer !== null || this.closed) return;
    this.unassignedTimer = setTimeout(() => {
      this.unassignedTimer = null;
      if (this.closed) return;
      const now = this.now();
      const unassigned = [...this.partitions.values()].filter((p) => p.sourceLeaderId < 0);
      this.failUnreachable(unassigned, now);
      if (unassigned.some((p) => this.partitions.get(p.key) === p)) void this.refreshMetadata();
    }, this.config.backoffMs);
    this.unassignedTimer.unref();
  }

  private async doRefreshMetadata(): Promise<void> {
    if (this.closed) return;
    const topics = [...new Set([...this.partitions.values()].map((p) => p.tp.topic))];
    if (topics.length === 0) return;
    const md = await this.endpoint.metadata(topics);
    const byName = new Map(md.topics.map((t) => [t.name, t]));
    let unassigned = false;
    for (const ps of [...this.partitions.values()]) {
      const t = byName.get(ps.tp.topic);
      if (t === undefined || t.errorCode === E.UNKNOWN_TOPIC_OR_PARTITION) {
        // Confirmed by a second look before calling the topic deleted (spec §8.10).
        ps.missingTopicCount++;
        if (ps.missingTopicCount >= 2) this.failPartition(ps, new Error('The source topic is deleted.'), true);
        else {
          unassigned = true;
          ps.sourceLeaderId = -1;
        }
        continue;
      }
      ps.missingTopicCount = 0;
      if (t.topicId !== ps.tp.topicId) {
        this.failPartition(ps, new Error(`The source topic was recreated with topic id ${t.topicId}.`), true);
        continue;
      }
      const p = t.partitions.find((x) => x.partition === ps.tp.partition);
      if (p === undefined || p.leaderId < 0) {
        ps.sourceLeaderId = -1;
        unassigned = true;
        continue;
      }
      if (p.leaderId !== ps.sourceLeaderId || p.leaderEpoch !== ps.sourceLeaderEpoch) {
        ps.sourceLeaderId = p.leaderId;
        ps.sourceLeaderEpoch = p.leaderEpoch;
        if (ps.state === 'fetching') ps.state = 'truncating';
      }
      this.ensureLoop(p.leaderId).notify();
    }
    if (unassigned) this.ensureUnassignedRetry();
  }

  private ensureLoop(brokerId: number): BrokerLoop {
    let loop = this.loops.get(brokerId);
    if (loop === undefined) {
      loop = new BrokerLoop(brokerId, this);
      this.loops.set(brokerId, loop);
      void loop.run();
    }
    return loop;
  }
}
