/**
 * BumpLeaderEpochs semantics (KIP-1279 spec §9.4, the controller's PartitionChangeRecord v3 with
 * an explicit LeaderEpoch): when the partition's current leader epoch is ≤ `minLeaderEpoch`, the
 * new epoch is max(min + 1, current); otherwise nothing changes. Resolves with the epoch the
 * partition has afterwards, once the image shows it.
 *
 * `whileMirrored` is for every bump but STOPPING's own (fencing, proactive, BumpLeaderEpochs from
 * a fetcher): it is refused with MIRROR_TOPIC_BEING_STOPPED once the topic is desired STOPPED,
 * because from then on a bump goes into the epoch cache while source batches may still be
 * appended below it (see MirrorControllerOp).
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import type { MirrorHost } from './mirror-host.js';

export async function bumpLeaderEpoch(
  host: MirrorHost,
  topic: string,
  topicId: string,
  partition: number,
  minLeaderEpoch: number,
  opts: { readonly whileMirrored: boolean },
): Promise<number> {
  const current = host.leaderEpoch(topic, partition);
  if (current === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown partition ${topic}-${partition}`);
  if (current > minLeaderEpoch) return current;
  const leaderEpoch = Math.max(minLeaderEpoch + 1, current);
  const res = await host.controllerWrite([{ type: 'bumpLeaderEpoch', topicId, partition, leaderEpoch, whileMirrored: opts.whileMirrored }]);
  if (res.errorCode !== 0) throw new KafkaError(res.errorCode, `BumpLeaderEpochs failed with error ${res.errorCode}: ${res.errorMessage ?? ''}`);
  return leaderEpoch;
}

interface BumpRequest {
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  minLeaderEpoch: number;
  readonly waiters: { resolve(epoch: number): void; reject(err: unknown): void }[];
}

/** Bumps per gathered write: a cluster's metadata batch is one etcd transaction (128 operations at most, one per record). */
const BUMPS_PER_WRITE = 100;

/**
 * Bumps gathered into few controller writes: the fetcher's proactive ones (`whileMirrored`), and
 * STOPPING's own (one instance with `whileMirrored` false). A mirror starting hundreds of
 * partitions asks for one bump per partition as each first batch is appended, and each alone
 * would be a metadata batch of its own, applied and reconciled by every node one after another
 * while the data waits. Requests made while a write is running go into the next write together,
 * as group commit gathers fsyncs; a partition asked for twice is bumped once, to the larger
 * minimum; a write carries at most BUMPS_PER_WRITE of them, the rest go into the next. When the controller refuses a gathered write (one partition is gone, or its topic is
 * being stopped) each partition of it is tried alone, so one refusal costs no other partition its
 * bump; each request then settles with its own partition's answer.
 *
 * Concurrency: one gathered write at a time; requests may arrive at any moment.
 */
export class EpochBumpBatcher {
  private pending = new Map<string, BumpRequest>();
  private running = false;
  /** The epoch each partition was last sent to by a gathered write, until `settledAt` claims it. */
  private readonly sent = new Map<string, number>();

  /** `defer` runs the gathering turn (setImmediate, or a simulated scheduler's step). */
  constructor(
    private readonly host: MirrorHost,
    private readonly defer: (fn: () => void) => void = (fn) => void setImmediate(fn),
    private readonly whileMirrored = true,
  ) {}

  /**
   * Whether `epoch` is the one a gathered write of this batcher set on the partition (asked once:
   * the answer is forgotten). The manager uses it to tell its own bump from a new leader term.
   */
  settledAt(topicId: string, partition: number, epoch: number): boolean {
    const k = keyOf(topicId, partition);
    if (this.sent.get(k) !== epoch) return false;
    this.sent.delete(k);
    return true;
  }

  private forget(targets: readonly [BumpRequest, number][]): void {
    for (const [r, epoch] of targets) {
      const k = keyOf(r.topicId, r.partition);
      if (this.sent.get(k) === epoch) this.sent.delete(k);
    }
  }

  /** Like `bumpLeaderEpoch(…, { whileMirrored })`, sent with the other requests pending now. */
  bump(topic: string, topicId: string, partition: number, minLeaderEpoch: number): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const k = keyOf(topicId, partition);
      let req = this.pending.get(k);
      if (req === undefined) this.pending.set(k, (req = { topic, topicId, partition, minLeaderEpoch, waiters: [] }));
      req.minLeaderEpoch = Math.max(req.minLeaderEpoch, minLeaderEpoch);
      req.waiters.push({ resolve, reject });
      if (!this.running) {
        this.running = true;
        // One turn first, so the requests of one fetch answer's appends share the write.
        this.defer(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.pending.size > 0) {
      const batch: BumpRequest[] = [];
      for (const [k, r] of this.pending) {
        if (batch.length === BUMPS_PER_WRITE) break;
        batch.push(r);
        this.pending.delete(k);
      }
      await this.write(batch);
    }
    this.running = false;
  }

  private async write(batch: readonly BumpRequest[]): Promise<void> {
    const ops = [];
    const targets: [BumpRequest, number][] = [];
    for (const r of batch) {
      const current = this.host.leaderEpoch(r.topic, r.partition);
      if (current === undefined) {
        settle(r, new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown partition ${r.topic}-${r.partition}`));
        continue;
      }
      if (current > r.minLeaderEpoch) {
        settle(r, current);
        continue;
      }
      const leaderEpoch = Math.max(r.minLeaderEpoch + 1, current);
      ops.push({ type: 'bumpLeaderEpoch' as const, topicId: r.topicId, partition: r.partition, leaderEpoch, whileMirrored: this.whileMirrored });
      targets.push([r, leaderEpoch]);
      // Before the write: the image may show the new epoch (and the manager look) before it answers.
      if (this.whileMirrored) this.sent.set(keyOf(r.topicId, r.partition), leaderEpoch);
    }
    if (ops.length === 0) return;
    let res;
    try {
      res = await this.host.controllerWrite(ops);
    } catch (err) {
      this.forget(targets);
      for (const [r] of targets) settle(r, err);
      return;
    }
    if (res.errorCode === 0) {
      for (const [r, epoch] of targets) settle(r, epoch);
      return;
    }
    // Refused: none of these epochs was set. What the retries below set is not recorded, so the
    // manager treats it as any epoch change (one more MIRRORING state write, nothing lost).
    this.forget(targets);
    if (targets.length === 1) {
      const [r] = targets[0] as [BumpRequest, number];
      settle(r, new KafkaError(res.errorCode, `BumpLeaderEpochs failed with error ${res.errorCode}: ${res.errorMessage ?? ''}`));
      return;
    }
    for (const [r] of targets) {
      await bumpLeaderEpoch(this.host, r.topic, r.topicId, r.partition, r.minLeaderEpoch, { whileMirrored: this.whileMirrored }).then(
        (epoch) => settle(r, epoch),
        (err: unknown) => settle(r, err),
      );
    }
  }
}

function keyOf(topicId: string, partition: number): string {
  return `${topicId}:${partition}`;
}

function settle(r: BumpRequest, outcome: number | unknown): void {
  for (const w of r.waiters) {
    if (typeof outcome === 'number') w.resolve(outcome);
    else w.reject(outcome);
  }
}
