/**
 * The mirror metadata manager (KIP-1279 spec §2 MirrorMetadataManager, §7): it watches the
 * node's metadata image, keeps one source connection and one mirror fetcher per mirror
 * (./mirror-runtime.ts), and drives each locally led mirror partition through the state machine,
 * whose actions live in ./state-actions.ts. The periodic source sync is ./source-sync.ts, the
 * read-only guard ./produce-guard.ts.
 *
 * Concurrency contract: single event loop; state transitions are serialised per partition by
 * the state machine; `sync()` may run any number of times (it is idempotent and coalesced).
 */
import type { KafkaClient } from '../client/kafka-client.js';
import { errorCodeOf } from '../protocol/kafka-error.js';
import { connectionFingerprint, type MirrorBrokerConfig } from './mirror-config.js';
import type { MirrorStateClient } from './mirror-state-client.js';
import type { MirrorHost } from './mirror-host.js';
import { MirrorPartitionState as S, mirrorStateName, type MirrorPartitionStateValue } from './mirror-partition-state.js';
import { MIRROR_STATE_TOPIC } from './mirror-coordinator.js';
import { closeMirrorRuntime, createMirrorRuntime, topicPartitionOf, type MirrorRuntime, type MirrorRuntimeFactory } from './mirror-runtime.js';
import { GatheredGroupSync } from './gathered-group-sync.js';
import { EpochBumpBatcher } from './leader-epoch-bump.js';
import { MirrorProduceGuard } from './produce-guard.js';
import { MirrorSourceSync } from './source-sync.js';
import { MirrorStateActions } from './state-actions.js';
import { MirrorStateMachine, NonRetryableMirrorError, partitionKeyString, type MirrorPartitionKey, type State } from './state-machine.js';

/** How soon a partition whose state could not be read is looked at again. */
const RESYNC_AFTER_FAILED_READ_MS = 500;

export interface PartitionDescription {
  readonly mirrorName: string;
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  readonly state: State;
  readonly stateName: string;
  readonly retryAttempt: number;
  readonly errorMessage: string | null;
  readonly sourceOffset: number;
  readonly destinationOffset: number;
  readonly lag: number;
  /** Max timestamp of the newest batch mirrored here, -1 unknown. */
  readonly mirroredMaxTimestamp: number;
  /** Max timestamp of the newest batch on the source, -1 unknown (./time-lag.ts fills it in). */
  sourceMaxTimestamp: number;
  /** Last good fetch from the source (ms since the epoch), -1 never. */
  readonly lastFetchTimestamp: number;
  /** Last error talking to the source since the last good fetch. */
  readonly linkError: string | null;
  /** Source leader of the partition (for the source timestamp lookup), -1 unknown. */
  readonly sourceLeaderId: number;
}

/** Seams of the manager's surroundings (the defaults are the real ones). */
interface MirrorManagerSeams {
  /** Builds a mirror's source client, lookups and fetcher. */
  readonly createRuntime?: MirrorRuntimeFactory;
  /** STOPPING's last group offset sync of one topic (default: the source sync's). */
  readonly syncGroups?: (rt: MirrorRuntime, topics: ReadonlySet<string>) => Promise<void>;
  /** The configs of a topic that just joined the mirror (default: the source sync's). */
  readonly syncConfigs?: (rt: MirrorRuntime, topics: string[]) => Promise<void>;
  /** The epoch bumps' batching turn (default setImmediate). */
  readonly defer?: (fn: () => void) => void;
  /** The retry backoffs' jitter (default Math.random). */
  readonly random?: () => number;
}

export class MirrorManager {
  readonly machine: MirrorStateMachine;
  readonly sourceSync: MirrorSourceSync;
  readonly produceGuard: MirrorProduceGuard;
  private readonly actions: MirrorStateActions;
  private readonly runtimes = new Map<string, MirrorRuntime>();
  /** Partitions the machine tracks, by key string. */
  private readonly tracked = new Map<string, MirrorPartitionKey>();
  /**
   * The tracked partitions in describe's order (topic, then partition), kept until `tracked`
   * changes: describe is polled (every 250 ms by a watching operator) and sorting every
   * partition led here at each poll cost more than the rest of the answer.
   */
  private trackedInOrder: MirrorPartitionKey[] | null = null;
  /** Partitions led here whose persisted state could not be read yet, with why: describe shows them. */
  private readonly unreadable = new Map<string, { key: MirrorPartitionKey; reason: string }>();
  /**
   * What each tracked partition was last reconciled with: its topic's desired state and its
   * leader epoch here. A metadata change that leaves both as they were (another topic created, a
   * config altered) is not applied again: re-entering MIRRORING persists it to `__mirror_state`.
   */
  private readonly applied = new Map<string, string>();
  /**
   * Tracked partitions whose held state is to be compared with the persisted one (`recheck`): a
   * new leader term seen (`fencedAt` -1), or a state write fenced at `fencedAt` (compared once the
   * image names a newer epoch). One comparison runs per partition at a time; `again` asks it for
   * another pass.
   */
  private readonly rechecks = new Map<string, { fencedAt: number; running: boolean; again: boolean }>();
  /** The fetchers' proactive bumps, gathered into few controller writes. */
  private readonly bumps: EpochBumpBatcher;
  /** STOPPING's own bumps, gathered the same way. */
  private readonly stopBumps: EpochBumpBatcher;
  private unsubscribe: (() => void) | null = null;
  private syncing: Promise<void> | null = null;
  private resync = false;
  private refreshTimer: (() => void) | null = null;
  private resyncTimer: (() => void) | null = null;
  private closed = false;

  constructor(
    private readonly host: MirrorHost,
    private readonly coordinator: MirrorStateClient,
    private readonly config: MirrorBrokerConfig,
    private readonly log: (msg: string) => void = () => undefined,
    warn: (msg: string) => void = log,
    private readonly seams: MirrorManagerSeams = {},
  ) {
    this.bumps = new EpochBumpBatcher(host, seams.defer);
    this.stopBumps = new EpochBumpBatcher(host, seams.defer, false);
    const groupSync = new GatheredGroupSync((rt, topics) => (seams.syncGroups ?? ((r, t) => this.sourceSync.syncGroups(r, t)))(rt, topics), seams.defer);
    this.actions = new MirrorStateActions({
      host,
      coordinator,
      log,
      runtime: (name) => this.runtimes.get(name),
      isClosed: () => this.closed,
      syncGroups: (rt, topics) => groupSync.syncTopics(rt, topics),
      bumpForStop: (key, min) => this.stopBumps.bump(key.topicName, key.topicId, key.partition, min),
      syncConfigs: (rt, topics) => (seams.syncConfigs ?? ((r, t) => this.sourceSync.syncConfigs(r, t)))(rt, topics),
    });
    this.machine = new MirrorStateMachine({
      store: coordinator,
      actions: this.actions.table(),
      clock: host.clock,
      timers: host.timers,
      retry: {
        initialBackoffMs: config.failedRetryInitialBackoffMs,
        maxBackoffMs: config.failedRetryMaxBackoffMs,
        maxAttempts: config.failedRetryMaxAttempts,
        jitter: 0.2,
      },
      ...(seams.random === undefined ? {} : { random: seams.random }),
      onTransition: (key, from, to) => {
        this.log(`mirror ${key.mirrorName} ${key.topicName}-${key.partition}: ${from === null ? 'none' : mirrorStateName(from)} -> ${mirrorStateName(to.state)}${to.errorMessage !== null && to.state === S.FAILED ? ` (${to.errorMessage})` : ''}`);
        if (to.state === S.FAILED) void this.runtimes.get(key.mirrorName)?.fetcher.removePartitions([topicPartitionOf(key)]);
      },
      onError: (key, err) => this.log(`mirror ${key.mirrorName} ${key.topicName}-${key.partition}: ${(err as Error).message}`),
      onSuperseded: (key, ran, now) =>
        this.log(`mirror ${key.mirrorName} ${key.topicName}-${key.partition}: the ${mirrorStateName(ran)} action was superseded (now ${mirrorStateName(now)}) and left the log alone`),
      onFenced: (key, epoch) => this.requestRecheck(partitionKeyString(key), epoch),
    });
    this.sourceSync = new MirrorSourceSync({
      host,
      machine: this.machine,
      log,
      warn,
      runtimes: () => [...this.runtimes.values()],
      trackedKeys: () => this.tracked.values(),
      isClosed: () => this.closed,
      ownsMirror: (name) => this.ownsMirror(name),
    });
    this.produceGuard = new MirrorProduceGuard({
      host,
      machine: this.machine,
      keyFor: (m, id, t, p) => this.keyFor(m, id, t, p),
      isTracked: (key) => this.tracked.has(partitionKeyString(key)),
    });
  }

  start(): void {
    this.unsubscribe = this.host.onMetadataChange(() => void this.sync());
    this.scheduleRefresh();
    void this.sync();
  }

  /** Reconciles mirrors and partitions with the metadata image; coalesces concurrent calls. */
  sync(): Promise<void> {
    if (this.syncing !== null) {
      this.resync = true;
      return this.syncing;
    }
    const run = (async () => {
      do {
        this.resync = false;
        await this.syncOnce().catch((err: unknown) => this.log(`mirror sync failed: ${(err as Error).message}`));
      } while (this.resync && !this.closed);
    })().finally(() => {
      this.syncing = null;
    });
    this.syncing = run;
    return run;
  }

  /** Current state of every partition of a mirror led here (for validation and describe). */
  describe(mirrorName: string): PartitionDescription[] {
    const out: PartitionDescription[] = [];
    const rt = this.runtimes.get(mirrorName);
    for (const { key, reason } of this.unreadable.values()) {
      if (key.mirrorName !== mirrorName) continue;
      out.push({
        mirrorName,
        topic: key.topicName,
        topicId: key.topicId,
        partition: key.partition,
        state: S.UNKNOWN,
        stateName: mirrorStateName(S.UNKNOWN),
        retryAttempt: 0,
        errorMessage: `its state in ${MIRROR_STATE_TOPIC} cannot be read yet (retrying): ${reason}`,
        sourceOffset: -1,
        destinationOffset: -1,
        lag: -1,
        mirroredMaxTimestamp: -1,
        sourceMaxTimestamp: -1,
        lastFetchTimestamp: -1,
        linkError: null,
        sourceLeaderId: -1,
      });
    }
    const unordered = out.length > 0;
    for (const key of this.inDescribeOrder()) {
      if (key.mirrorName !== mirrorName) continue;
      const snap = this.machine.snapshot(key);
      const state = snap?.state ?? S.UNKNOWN;
      const status = state === S.MIRRORING ? rt?.fetcher.status(topicPartitionOf(key)) : undefined;
      // Only a fetching partition shows a destination offset: the others need no log lookup.
      const log = status !== undefined ? this.host.partitionLog(key.topicName, key.partition) : undefined;
      const stuck = this.machine.stuck(key);
      const stuckFor = stuck === null ? '' : `the transition to ${mirrorStateName(stuck.to)} has not been persisted for ${Math.round((this.host.clock.now() - stuck.sinceMs) / 1000)} s (${stuck.attempts} attempts, retrying): ${stuck.lastError}`;
      out.push({
        mirrorName,
        topic: key.topicName,
        topicId: key.topicId,
        partition: key.partition,
        state,
        stateName: mirrorStateName(state),
        retryAttempt: snap?.retryAttempt ?? 0,
        errorMessage: stuck !== null ? stuckFor : (snap?.errorMessage ?? null),
        sourceOffset: status?.sourceHighWatermark ?? -1,
        destinationOffset: status !== undefined ? (log?.highWatermark ?? -1) : -1,
        lag: status?.lag ?? -1,
        mirroredMaxTimestamp: status?.mirroredMaxTimestamp ?? -1,
        // Caught up: the newest batch here is the source's newest.
        sourceMaxTimestamp: status !== undefined && status.lag === 0 ? status.mirroredMaxTimestamp : -1,
        lastFetchTimestamp: status !== undefined && status.lastFetchMs > 0 ? status.lastFetchMs : -1,
        linkError: status?.linkError ?? null,
        sourceLeaderId: status?.sourceLeaderId ?? -1,
      });
    }
    return unordered ? out.sort((a, b) => compareTopicPartition(a.topic, a.partition, b.topic, b.partition)) : out;
  }

  private inDescribeOrder(): MirrorPartitionKey[] {
    this.trackedInOrder ??= [...this.tracked.values()].sort((a, b) => compareTopicPartition(a.topicName, a.partition, b.topicName, b.partition));
    return this.trackedInOrder;
  }

  /**
   * The first partition state of a topic that `isBad` refuses, wherever the partition is led
   * (spec §4.2 step 1, the reference's MirrorMetadataManager.validateMirrorStates); null when
   * every partition passes. A partition led here answers from the state machine, any other from
   * its mirror coordinator, in-process or over the wire as ReadMirrorStates (UNKNOWN when nothing
   * is persisted). All are asked at once and the answer comes with the first bad state.
   *
   * A coordinator that does not answer within `waitMs` (stopped, cut off, moving; or its read
   * waits behind an acks=all write of the shard that an ISR member which just died holds up
   * until the ISR shrinks) leaves its partitions UNKNOWN, as a partition nobody has loaded is, which every request accepts: a
   * stop must not wait on the cluster it is failing over from, and the partition's leader
   * applies the new desired state when it reads its state again.
   */
  firstBadState(mirrorName: string, topicName: string, topicId: string, isBad: (s: State) => boolean, waitMs = 2000): Promise<State | null> {
    const n = this.host.partitionCount(topicName) ?? 0;
    if (n === 0) return Promise.resolve(null);
    return new Promise((resolve) => {
      let pending = n;
      const timers: (() => void)[] = [];
      const done = (v: State | null): void => {
        for (const cancel of timers) cancel();
        resolve(v);
      };
      const answer = (state: State): void => {
        if (isBad(state)) done(state);
        else if (--pending === 0) done(null);
      };
      for (let p = 0; p < n; p++) {
        const key = this.keyFor(mirrorName, topicId, topicName, p);
        if (this.tracked.has(partitionKeyString(key))) {
          answer(this.machine.state(key));
          continue;
        }
        let answered = false;
        const once = (state: State): void => {
          if (answered) return;
          answered = true;
          answer(state);
        };
        timers.push(this.host.timers.schedule(waitMs, () => once(S.UNKNOWN)));
        this.coordinator.read(mirrorName, topicId, p, waitMs).then(
          (r) => once(r.state?.state ?? S.UNKNOWN),
          () => once(S.UNKNOWN),
        );
      }
    });
  }

  /** Connected source client of a mirror (for the handlers: source metadata for StartMirrorTopics). */
  sourceClient(mirrorName: string): KafkaClient | undefined {
    return this.runtimes.get(mirrorName)?.client;
  }

  /** Drops everything about a deleted mirror: fetcher, connections, `__mirror_state` records. */
  async forgetMirror(mirrorName: string): Promise<void> {
    for (const [k, key] of [...this.tracked]) {
      if (key.mirrorName !== mirrorName) continue;
      this.machine.forget(key);
      this.tracked.delete(k);
      this.trackedInOrder = null;
      this.applied.delete(k);
    }
    await this.closeRuntime(mirrorName);
    await this.coordinator.tombstoneMirror(mirrorName);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    this.refreshTimer?.();
    this.resyncTimer?.();
    this.machine.close();
    await this.syncing?.catch(() => undefined);
    for (const name of [...this.runtimes.keys()]) await this.closeRuntime(name);
    this.sourceSync.close();
  }

  private async syncOnce(): Promise<void> {
    if (this.closed) return;
    const configs = this.host.mirrorConfigs();
    // Mirrors: create, rebuild on connection changes, drop when deleted.
    for (const [name, cfg] of configs) {
      const rt = this.runtimes.get(name);
      const fp = connectionFingerprint(cfg);
      if (rt !== undefined && rt.fingerprint === fp) continue;
      if (rt !== undefined) await this.closeRuntime(name);
      try {
        this.runtimes.set(name, (this.seams.createRuntime ?? createMirrorRuntime)(this.host, this.config, name, cfg, fp, this.runtimeEvents(name)));
      } catch (err) {
        this.log(`mirror ${name}: cannot build its source client: ${(err as Error).message}`);
      }
      if (rt !== undefined) {
        // Connection settings changed: re-run MIRRORING so partitions join the new fetcher.
        for (const key of this.tracked.values()) {
          if (key.mirrorName === name && this.machine.state(key) === S.MIRRORING) void this.machine.transition(key, S.MIRRORING, { expectedFrom: S.MIRRORING });
        }
      }
    }
    for (const name of [...this.runtimes.keys()]) if (!configs.has(name)) await this.closeRuntime(name);

    // Partitions: every locally led partition of every bound topic. Each one's read of its
    // persisted state and its first state write run side by side (a start of 200 partitions is
    // one round of coordinator calls, not 200 in a row); a partition's own steps stay in order.
    const seen = new Set<string>();
    const steps: Promise<void>[] = [];
    for (const b of this.host.mirrorTopicBindings()) {
      if (!configs.has(b.mirrorName)) continue;
      const n = this.host.partitionCount(b.topicName) ?? 0;
      for (let p = 0; p < n; p++) {
        if (!this.host.isLocalLeader(b.topicName, p)) continue;
        const key = this.keyFor(b.mirrorName, b.topicId, b.topicName, p);
        const ks = partitionKeyString(key);
        seen.add(ks);
        const epoch = this.host.leaderEpoch(b.topicName, p) ?? -1;
        const applied = `${b.desiredState}:${epoch}`;
        if (!this.tracked.has(ks)) {
          steps.push(this.track(key, ks, applied, b.desiredState, epoch));
        } else if (this.applied.get(ks) !== applied) {
          // Still led here, now under this epoch: the state writes from now on carry it.
          this.machine.noteLeaderEpoch(key, epoch);
          // The desired state changed, or the partition's leader epoch here did (a new leader
          // term): apply it. Anything else about the partition is unchanged by this metadata.
          const previous = this.applied.get(ks);
          this.applied.set(ks, applied);
          // Except the epoch this node's own proactive bump set on a partition it keeps mirroring:
          // the same leader goes on, and re-entering MIRRORING would only write the state again.
          const ownBump =
            previous?.startsWith(`${b.desiredState}:`) === true &&
            b.desiredState === S.MIRRORING &&
            this.machine.state(key) === S.MIRRORING &&
            this.bumps.settledAt(b.topicId, p, this.host.leaderEpoch(b.topicName, p) ?? -1);
          if (!ownBump) steps.push(this.machine.setDesired(key, b.desiredState));
          if (previous !== undefined && previous.slice(previous.indexOf(':') + 1) !== String(epoch)) this.requestRecheck(ks, -1);
        }
      }
    }
    const failed = (await Promise.allSettled(steps)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    for (const ks of [...this.unreadable.keys()]) if (!seen.has(ks)) this.unreadable.delete(ks);
    // A comparison that could not finish (a failed read, a claim that did not land) or that waits
    // for the image to name a newer epoch is taken up again.
    for (const ks of this.rechecks.keys()) if (seen.has(ks)) void this.recheck(ks);
    for (const [ks, key] of [...this.tracked]) {
      if (seen.has(ks)) continue;
      this.machine.forget(key);
      this.tracked.delete(ks);
      this.trackedInOrder = null;
      this.applied.delete(ks);
      this.rechecks.delete(ks);
      await this.runtimes.get(key.mirrorName)?.fetcher.removePartitions([topicPartitionOf(key)]);
    }
  }

  /**
   * Starts tracking a partition from the state its coordinator (maybe another node) keeps; one
   * whose read fails is left untracked and looked at again shortly, the others go on.
   */
  private async track(key: MirrorPartitionKey, ks: string, applied: string, desired: State, leaderEpoch: number): Promise<void> {
    let stored;
    try {
      stored = await this.coordinator.read(key.mirrorName, key.topicId, key.partition, 0);
    } catch (err) {
      this.log(`mirror ${key.mirrorName} ${key.topicName}-${key.partition}: reading its state failed, retrying: ${(err as Error).message}`);
      this.unreadable.set(ks, { key, reason: (err as Error).message });
      this.resyncSoon();
      return;
    }
    this.unreadable.delete(ks);
    if (this.closed) return;
    if (this.tracked.get(ks) !== key) this.trackedInOrder = null;
    this.tracked.set(ks, key);
    this.applied.set(ks, applied);
    await this.machine.resume(key, stored.state, desired, leaderEpoch);
  }

  /**
   * Asks for the partition's held state to be compared with the persisted one: a new leader term
   * of a partition this node went on leading as far as its image showed (`fencedAt` -1), or a
   * state write of it fenced at `fencedAt`. While its image lagged (cut off from the controller)
   * another node may have led the partition under an epoch in between and persisted a state over
   * this node's, which the coordinator rightly took.
   */
  private requestRecheck(ks: string, fencedAt: number): void {
    if (!this.tracked.has(ks)) return;
    const r = this.rechecks.get(ks);
    if (r === undefined) this.rechecks.set(ks, { fencedAt, running: false, again: false });
    else {
      r.fencedAt = Math.max(r.fencedAt, fencedAt);
      r.again = true;
    }
    void this.recheck(ks);
  }

  /**
   * The comparison `requestRecheck` asked for. Once no state write of the partition is out and
   * the image names an epoch above the fenced one: nothing to do when this node's own write at
   * that epoch has landed (it is the persisted state); else the persisted state is read, and one
   * that differs from the held one is taken on as a new leader does, while an equal resting one is
   * claimed at the epoch (`MirrorStateMachine.claim`). Until then the read-only guard keeps a
   * STOPPED partition refused: its held state is not known to be the persisted one at this epoch.
   * A failed read or claim is tried again at the next sync.
   */
  private async recheck(ks: string): Promise<void> {
    const r = this.rechecks.get(ks);
    if (r === undefined || r.running) return;
    r.running = true;
    try {
      for (;;) {
        r.again = false;
        const key = this.tracked.get(ks);
        if (this.closed || key === undefined || this.rechecks.get(ks) !== r) return;
        // Led elsewhere now: the sync that hears so forgets the partition.
        if (!this.host.isLocalLeader(key.topicName, key.partition)) return;
        const epoch = this.host.leaderEpoch(key.topicName, key.partition) ?? -1;
        // The image has not caught up with the epoch that fenced the write: its change syncs again.
        if (epoch <= r.fencedAt) return;
        await this.machine.settled(key);
        if (r.again) continue;
        if (this.tracked.get(ks) !== key) return;
        if (epoch >= 0 && this.machine.confirmedEpochOf(key) === epoch) {
          this.rechecks.delete(ks);
          return;
        }
        const held = this.machine.snapshot(key);
        let stored;
        try {
          stored = await this.coordinator.read(key.mirrorName, key.topicId, key.partition, 0);
        } catch {
          this.resyncSoon();
          return;
        }
        if (this.closed || this.tracked.get(ks) !== key || !this.host.isLocalLeader(key.topicName, key.partition)) return;
        if (r.again || this.machine.snapshot(key) !== held || this.machine.isSettling(key) || (this.host.leaderEpoch(key.topicName, key.partition) ?? -1) !== epoch) continue;
        const differs = (stored.state?.state ?? S.UNKNOWN) !== (held?.state ?? S.UNKNOWN);
        // A fenced write is lost (an action's next state, a claim): the partition is taken on
        // again as a new leader does, which redoes what the held state's action had left to do.
        if (differs || r.fencedAt >= 0) {
          if (differs) this.log(`mirror ${key.mirrorName} ${key.topicName}-${key.partition}: persisted ${mirrorStateName(stored.state?.state ?? S.UNKNOWN)} while this node held ${mirrorStateName(held?.state ?? S.UNKNOWN)}; taking it on from what is persisted`);
          await this.machine.retake(key, stored.state, this.machine.desired(key), epoch);
        } else if (!(await this.machine.claim(key))) {
          if (r.again) continue;
          this.resyncSoon();
          return;
        }
        if (r.again) continue;
        if (this.rechecks.get(ks) === r) this.rechecks.delete(ks);
        return;
      }
    } finally {
      r.running = false;
    }
  }

  private resyncSoon(): void {
    if (this.resyncTimer !== null || this.closed) return;
    this.resyncTimer = this.host.timers.schedule(RESYNC_AFTER_FAILED_READ_MS, () => {
      this.resyncTimer = null;
      void this.sync();
    });
  }

  private runtimeEvents(name: string) {
    return {
      keyFor: (m: string, id: string, t: string, p: number) => this.keyFor(m, id, t, p),
      onEpochFenced: (key: MirrorPartitionKey, epoch: number) => {
        this.actions.noteFenced(key, epoch);
        void this.machine.transition(key, S.EPOCH_FENCING, { expectedFrom: S.MIRRORING });
      },
      requestEpochBump: (key: MirrorPartitionKey, min: number) => {
        void this.bumps.bump(key.topicName, key.topicId, key.partition, min).catch((err: unknown) =>
          this.log(`mirror ${name}: proactive epoch bump of ${key.topicName}-${key.partition} failed: ${(err as Error).message}`),
        );
      },
      onPartitionFailed: (key: MirrorPartitionKey, err: Error, nonRetryable: boolean) => {
        void this.machine.fail(key, nonRetryable ? new NonRetryableMirrorError(errorCodeOf(err), err.message) : err);
      },
      onProgress: (key: MirrorPartitionKey) => this.machine.markHealthy(key),
    };
  }

  private async closeRuntime(name: string): Promise<void> {
    const rt = this.runtimes.get(name);
    if (rt === undefined) return;
    this.runtimes.delete(name);
    await closeMirrorRuntime(rt);
  }

  /**
   * Whether this node runs the mirror-level refresh of `mirrorName` (discovery, config, group and
   * ACL sync): one node per mirror, the leader of its `__mirror_state` partition
   * (hash(mirror name), spec §2), so the source is asked once and Start/Stop are not raced
   * between nodes. A node alone owns every mirror.
   */
  ownsMirror(mirrorName: string): boolean {
    const leadership = this.host.leadership;
    if (leadership === undefined) return true;
    const p = this.coordinator.coordinator.partitionForMirror(mirrorName);
    if (leadership.leaderEndpoint(MIRROR_STATE_TOPIC, p) === null) {
      leadership.ensureTopic(MIRROR_STATE_TOPIC, this.coordinator.coordinator.runtime.partitions);
      return false;
    }
    return leadership.leads(MIRROR_STATE_TOPIC, p);
  }

  /** Periodic source sync (spec §10). */
  private scheduleRefresh(): void {
    if (this.closed) return;
    this.refreshTimer = this.host.timers.schedule(this.config.metadataRefreshIntervalMs, () => {
      void this.sourceSync.refreshSources().finally(() => this.scheduleRefresh());
    });
  }

  private keyFor(mirrorName: string, topicId: string, topicName: string, partition: number): MirrorPartitionKey {
    const ks = `${mirrorName}:${topicId}:${partition}`;
    return this.tracked.get(ks) ?? { mirrorName, topicId, topicName, partition };
  }
}

export type { MirrorPartitionStateValue };

function compareTopicPartition(aTopic: string, aPartition: number, bTopic: string, bPartition: number): number {
  return aTopic < bTopic ? -1 : aTopic > bTopic ? 1 : aPartition - bPartition;
}
