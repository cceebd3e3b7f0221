/**
 * The work each mirror partition state does on entry (KIP-1279 spec §8):
 *
 *   LOG_TRUNCATION  loop check (ListClusterMirrors on the source), LME lookup
 *                   (DescribeClusterMirrors with our cluster id), truncate to endOffsetForEpoch(LME)
 *   MIRRORING       add the partition to the mirror's fetcher
 *   EPOCH_FENCING   remove it, bump the destination leader epoch above the source's, MIRRORING
 *   PAUSING         remove it from the fetcher, PAUSED
 *   STOPPING        remove fetcher → persist LME → bump epoch → ABORT open txns →
 *                   MIRROR_PID_RESET → STOPPED
 *
 * Concurrency contract: single event loop; the state machine starts an action only after its
 * transition is persisted, and each action asks for the next transition itself. The steps that
 * change the log (the truncation, the STOPPING sequence) run through `run.exclusive`: skipped once
 * the partition has moved on (a stop that arrived while the truncation waited on the source), and
 * never beside each other. Fetcher changes check `run.isCurrent()` right before they are made and
 * take no lock, so a fetcher removal waiting on the network never holds up a later state.
 */
import { ControlRecordType, buildEndTxnMarkerBatch, buildMirrorPidResetBatch, controlTypeOf } from '../protocol/control-records.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError, errorCodeOf } from '../protocol/kafka-error.js';
import { iterateBatches } from '../protocol/record-batch.js';
import { NOTHING_MIRRORED } from './mirror-coordinator.js';
import type { MirrorStateClient } from './mirror-state-client.js';
import type { MirrorLog } from '../fetcher/mirror-log.js';
import type { MirrorHost } from './mirror-host.js';
import { MirrorPartitionState as S } from './mirror-partition-state.js';
import { topicPartitionOf, type MirrorRuntime } from './mirror-runtime.js';
import { bumpLeaderEpoch } from './leader-epoch-bump.js';
import { awaitFollowersTruncated, awaitReadyToTruncate } from './replica-truncation.js';
import {
  NonRetryableMirrorError,
  SupersededActionError,
  partitionKeyString,
  type ActionRun,
  type MirrorPartitionKey,
  type MirrorStateMachine,
  type State,
  type StateAction,
} from './state-machine.js';

/**
 * The last mirrored epoch a log's last batch gives. A log ending with an earlier STOPPING's
 * barrier, written at a destination epoch: that STOPPING found nothing mirrored (else it had
 * recorded the epoch), so nothing is.
 */
function epochOfLastBatch(partitionLeaderEpoch: number, controlType: number): number {
  return controlType === ControlRecordType.MIRROR_PID_RESET ? -1 : partitionLeaderEpoch;
}

/** What the actions need from the manager around them. */
interface StateActionDeps {
  readonly host: MirrorHost;
  readonly coordinator: MirrorStateClient;
  readonly log: (msg: string) => void;
  runtime(mirrorName: string): MirrorRuntime | undefined;
  isClosed(): boolean;
  /** Last group offset sync for one topic (STOPPING, spec §10.2). */
  syncGroups(rt: MirrorRuntime, topics: ReadonlySet<string>): Promise<void>;
  /**
   * STOPPING's own epoch bump (not `whileMirrored`), gathered with the other partitions' into few
   * controller writes; one controller write of its own when absent.
   */
  readonly bumpForStop?: (key: MirrorPartitionKey, minLeaderEpoch: number) => Promise<number>;
  /** Topic configs of a topic that just joined the mirror (spec §10.1). */
  syncConfigs(rt: MirrorRuntime, topics: string[]): Promise<void>;
}

export class MirrorStateActions {
  /** Source epoch seen by the fetcher when it fenced a partition, until EPOCH_FENCING uses it. */
  private readonly fencedEpochs = new Map<string, number>();

  constructor(private readonly deps: StateActionDeps) {}

  /** The action table the state machine runs. */
  table(): Partial<Record<State, StateAction>> {
    return {
      [S.LOG_TRUNCATION]: (k, m, r) => this.onLogTruncation(k, m, r),
      [S.MIRRORING]: (k, _m, r) => this.onMirroring(k, r),
      [S.EPOCH_FENCING]: (k, m, r) => this.onEpochFencing(k, m, r),
      [S.PAUSING]: (k, m) => this.onPausing(k, m),
      [S.STOPPING]: (k, m, r) => this.onStopping(k, m, r),
    };
  }

  noteFenced(key: MirrorPartitionKey, sourceEpoch: number): void {
    this.fencedEpochs.set(partitionKeyString(key), sourceEpoch);
  }

  private async onLogTruncation(key: MirrorPartitionKey, machine: MirrorStateMachine, run: ActionRun): Promise<void> {
    const { host } = this.deps;
    const ledUnder = this.ledUnder(key, machine);
    const rt = this.requireRuntime(key.mirrorName);
    const log = await this.awaitLog(key);
    if (await rt.lookups.hasMirrorLoop(host.clusterId, key.topicName)) {
      throw new NonRetryableMirrorError(ErrorCode.TOPIC_ALREADY_IN_CLUSTER_MIRROR, `Detected mirror loop: the source cluster mirrors ${key.topicName} from this cluster (${host.clusterId}).`);
    }
    const lme = await rt.lookups.lastMirrorEpoch(host.clusterId, key.topicId, key.partition);
    const targetOf = (): number => {
      if (lme < 0) return 0;
      const r = log.endOffsetForEpoch(lme);
      return r.endOffset >= 0 ? r.endOffset : 0;
    };
    // Replicas first: the ISR holds all the leader has before it cuts (./replica-truncation.ts).
    const ctx = { host, key, log, isCurrent: () => run.isCurrent() && !this.deps.isClosed(), say: this.deps.log };
    // A wait cut short by a newer state goes on to `exclusive`, which skips the cut (and says so).
    if (targetOf() < log.logEndOffset) await awaitReadyToTruncate(ctx);
    // The lookups may have answered after a stop made the log writable: truncate only if this is
    // still the partition's truncation (the STOPPING that superseded it waits for this step).
    let truncated = false;
    await run.exclusive(async () => {
      const target = targetOf();
      if (target < log.logEndOffset) {
        this.deps.log(`mirror ${key.mirrorName} ${key.topicName}-${key.partition}: truncating to ${target} (last mirrored epoch ${lme})`);
        await log.truncateTo(target);
        truncated = true;
      }
    });
    if (truncated) this.deps.log(`mirror ${key.mirrorName} ${key.topicName}-${key.partition}: truncated, waiting for the replicas to follow`);
    // MIRRORING appends only once no follower that counts keeps what was cut: on every attempt,
    // also a retry that finds the log already cut (a replica that was down when the first attempt
    // cut still holds the records, and an unclean election could make it leader).
    if (!(await awaitFollowersTruncated(ctx))) return;
    if (!run.isCurrent()) return;
    await this.forgetLastMirroredEpoch(key, ledUnder);
    await machine.transition(key, S.MIRRORING, { expectedFrom: S.LOG_TRUNCATION });
  }

  /**
   * The partition's log. A node opens the logs of a topic just created one by one (thousands take
   * seconds), so a log being opened is waited for as long as that takes; a partition the image
   * does not place here yet is given a moment before it is called a failure.
   */
  private async awaitLog(key: MirrorPartitionKey, timeoutMs = 5000): Promise<MirrorLog> {
    const { host } = this.deps;
    const until = host.clock.now() + timeoutMs;
    for (;;) {
      const log = host.partitionLog(key.topicName, key.partition) ?? (await host.openPartitionLog?.(key.topicName, key.partition));
      if (log !== undefined) return log;
      if (this.deps.isClosed() || host.clock.now() >= until) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `no local log for ${key.topicName}-${key.partition}`);
      await new Promise<void>((r) => host.timers.schedule(20, r));
    }
  }

  private async onMirroring(key: MirrorPartitionKey, run: ActionRun): Promise<void> {
    await this.awaitLog(key);
    const rt = this.requireRuntime(key.mirrorName);
    const tp = topicPartitionOf(key);
    // Never add a partition that moved on (paused, stopping) while the log was being awaited;
    // the check and the add are one synchronous step.
    if (!run.isCurrent() || rt.fetcher.has(tp)) return;
    rt.fetcher.addPartitions([tp]);
    // A topic joining the mirror gets the source's topic configs without waiting for a refresh.
    if (key.partition === 0) void this.deps.syncConfigs(rt, [key.topicName]);
  }

  private async onEpochFencing(key: MirrorPartitionKey, machine: MirrorStateMachine, run: ActionRun): Promise<void> {
    const rt = this.requireRuntime(key.mirrorName);
    await rt.fetcher.removePartitions([topicPartitionOf(key)]);
    const ks = partitionKeyString(key);
    const sourceEpoch = this.fencedEpochs.get(ks) ?? -1;
    this.fencedEpochs.delete(ks);
    if (!run.isCurrent()) return;
    // A stop that landed meanwhile refuses the bump: STOPPING bumps after the fetcher is out.
    if (sourceEpoch >= 0) {
      await bumpLeaderEpoch(this.deps.host, key.topicName, key.topicId, key.partition, sourceEpoch + 10, { whileMirrored: true }).catch((err: unknown) => {
        if (errorCodeOf(err) !== ErrorCode.MIRROR_TOPIC_BEING_STOPPED) throw err;
      });
      this.adoptOwnEpoch(key, machine);
    }
    await machine.transition(key, S.MIRRORING, { expectedFrom: S.EPOCH_FENCING });
  }

  private async onPausing(key: MirrorPartitionKey, machine: MirrorStateMachine): Promise<void> {
    await this.deps.runtime(key.mirrorName)?.fetcher.removePartitions([topicPartitionOf(key)]);
    await machine.transition(key, S.PAUSED, { expectedFrom: S.PAUSING });
  }

  /** STOPPING, in the order of spec §8.5; every step is idempotent so a new leader can redo it. */
  private async onStopping(key: MirrorPartitionKey, machine: MirrorStateMachine, run: ActionRun): Promise<void> {
    // The epoch this run leads under, taken before anything is awaited: a node that loses the
    // partition meanwhile forgets it, and its late writes must still carry the old epoch.
    const ledUnder = this.ledUnder(key, machine);
    // A last group offset sync for this topic, so consumers resume where they were on the source
    // (bounded: a failover often happens because the source is gone).
    const rt = this.deps.runtime(key.mirrorName);
    if (rt !== undefined) {
      let cancel: () => void = () => undefined;
      const bounded = new Promise<void>((r) => (cancel = this.deps.host.timers.schedule(5000, r)));
      await Promise.race([this.deps.syncGroups(rt, new Set([key.topicName])), bounded]);
      cancel();
    }
    await run.exclusive(() => this.stopSequence(key, rt, machine, run, ledUnder));
    // f. writable
    await machine.transition(key, S.STOPPED, { expectedFrom: S.STOPPING });
  }

  /** Steps a-e of STOPPING. */
  private async stopSequence(key: MirrorPartitionKey, rt: MirrorRuntime | undefined, machine: MirrorStateMachine, run: ActionRun, ledUnder: number): Promise<void> {
    const { host, coordinator } = this.deps;
    // a. remove the fetcher; resolves once its in-flight append has finished
    await rt?.fetcher.removePartitions([topicPartitionOf(key)]);
    const log = await this.awaitLog(key);
    // b. the last mirrored epoch, persisted
    const lme = await this.lastMirroredEpoch(key, log);
    // A run superseded meanwhile (the partition moved away and back) stops here: the run that
    // superseded it does every step again, with what the log holds by then.
    if (!run.isCurrent()) throw new SupersededActionError('STOPPING was superseded');
    // Fenced with the epoch this node leads under: a deposed leader's late write is refused.
    // "Nothing mirrored" is recorded too, so that a later STOPPING does not read the log again.
    await coordinator.write(key.mirrorName, [{ topicId: key.topicId, partition: key.partition, lastMirrorEpoch: lme >= 0 ? lme : NOTHING_MIRRORED, leaderEpoch: ledUnder }]);
    if (!run.isCurrent()) throw new SupersededActionError('STOPPING was superseded');
    // c. bump the leader epoch past it, and wait until the image shows it
    // The fetcher is out and its last append done: the first destination epoch may land now.
    if (this.deps.bumpForStop !== undefined) await this.deps.bumpForStop(key, Math.max(lme, 0));
    else await bumpLeaderEpoch(host, key.topicName, key.topicId, key.partition, Math.max(lme, 0), { whileMirrored: false });
    this.adoptOwnEpoch(key, machine);
    const epoch = host.leaderEpoch(key.topicName, key.partition) ?? 0;
    // d. abort open transactions
    for (const txn of host.openTransactions(key.topicName, key.partition)) {
      const batch = buildEndTxnMarkerBatch({
        commit: false,
        producerId: txn.producerId,
        producerEpoch: txn.producerEpoch,
        coordinatorEpoch: txn.coordinatorEpoch,
        partitionLeaderEpoch: epoch,
        timestamp: host.clock.now(),
      });
      const r = await host.appendCoordinatorBatch(key.topicName, key.partition, batch);
      if (r.errorCode !== 0) throw new KafkaError(r.errorCode, `writing the ABORT marker for producer ${txn.producerId} failed with error ${r.errorCode}`);
    }
    // e. the producer-state barrier
    const sourceClusterId = host.mirrorConfigs().get(key.mirrorName)?.get('mirror.source.cluster.id') ?? '';
    const reset = buildMirrorPidResetBatch({ sourceClusterId, partitionLeaderEpoch: epoch, timestamp: host.clock.now() });
    const r = await host.appendCoordinatorBatch(key.topicName, key.partition, reset);
    if (r.errorCode !== 0) throw new KafkaError(r.errorCode, `writing MIRROR_PID_RESET failed with error ${r.errorCode}`);
  }

  /**
   * The node's own bump moved the partition's epoch while it goes on leading it: its later state
   * writes carry the new epoch (a node that lost the partition meanwhile keeps the old one).
   */
  private adoptOwnEpoch(key: MirrorPartitionKey, machine: MirrorStateMachine): void {
    const { host } = this.deps;
    const epoch = host.leaderEpoch(key.topicName, key.partition);
    if (epoch !== undefined && host.isLocalLeader(key.topicName, key.partition)) machine.noteLeaderEpoch(key, epoch);
  }

  /**
   * The last mirrored epoch a STOPPING recorded describes the log up to that stop; mirroring again
   * makes it stale, so it is cleared before the first new batch can be appended. A recorded one is
   * then always right for the next STOPPING: nothing was mirrored since.
   */
  private async forgetLastMirroredEpoch(key: MirrorPartitionKey, ledUnder: number): Promise<void> {
    const { coordinator } = this.deps;
    if ((await coordinator.read(key.mirrorName, key.topicId, key.partition)).lastMirrorEpoch === -1) return;
    await coordinator.write(key.mirrorName, [{ topicId: key.topicId, partition: key.partition, lastMirrorEpoch: -1, leaderEpoch: ledUnder }]);
  }

  /** The epoch this node leads the partition under: the machine's, else the image's now. */
  private ledUnder(key: MirrorPartitionKey, machine: MirrorStateMachine): number {
    const e = machine.leaderEpochOf(key);
    return e >= 0 ? e : (this.deps.host.leaderEpoch(key.topicName, key.partition) ?? -1);
  }

  /**
   * The epoch of the last mirrored batch. One recorded by an earlier STOPPING holds (nothing has
   * been mirrored since, see `forgetLastMirroredEpoch`): a STOPPING redone by a new leader after
   * the first one's markers, or a stop after a start that failed before mirroring and client
   * writes since, would otherwise take a destination epoch. Else the partition leader epoch of
   * the log's last batch (the epoch cache's latest entry can be a destination leader-epoch marker
   * written at a bump): as the append that wrote it saw it, read from the log only when the log
   * does not know it (a log opened since, or truncated).
   */
  private async lastMirroredEpoch(key: MirrorPartitionKey, log: MirrorLog): Promise<number> {
    const stored = (await this.deps.coordinator.read(key.mirrorName, key.topicId, key.partition)).lastMirrorEpoch;
    if (stored >= 0) return stored;
    // An earlier STOPPING found nothing mirrored, and nothing has been since: whatever the log
    // ends with (markers, client writes) is this cluster's own.
    if (stored === NOTHING_MIRRORED) return -1;
    if (log.logEndOffset <= log.logStartOffset) return -1;
    const known = log.lastBatch;
    if (known !== undefined) return epochOfLastBatch(known.partitionLeaderEpoch, known.controlType);
    const r = await log.readToBuffer({ fetchOffset: log.logEndOffset - 1, maxOffset: log.logEndOffset, maxBytes: 1 << 20, minOneMessage: true });
    let epoch = -1;
    for (const b of iterateBatches(r.records)) epoch = epochOfLastBatch(b.partitionLeaderEpoch, b.isControl ? controlTypeOf(b) : -1);
    return epoch;
  }

  private requireRuntime(name: string): MirrorRuntime {
    const rt = this.deps.runtime(name);
    if (rt === undefined) throw new KafkaError(ErrorCode.INVALID_CONFIG, `mirror ${name} has no usable source connection settings`);
    return rt;
  }
}

