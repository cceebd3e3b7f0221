/**
 * The mirror partition state machine (KIP-1279 spec §7): legal transitions, the next-state choice
 * when a leader (re)discovers a partition, persistence before action, and FAILED retries with
 * exponential backoff and jitter.
 *
 * Concurrency contract: single event loop. Transitions of one partition are serialised through a
 * per-partition promise chain; a state's action starts only after the transition has been
 * persisted and runs outside that chain, so an action may itself request the next transition.
 * Actions that finish late check `expectedFrom` so a stale action (the partition moved on while it
 * ran, e.g. a stop arrived during truncation) cannot drive the partition backwards.
 */
import type { CancelTimer, Clock, Timers } from '../common/time.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { MirrorPartitionState as S, mirrorStateName, type MirrorPartitionStateValue } from './mirror-partition-state.js';
import {
  DEFAULT_RETRY_POLICY,
  DEFAULT_STUCK_AFTER_MS,
  STATE_WRITE_RETRY_POLICY,
  retryBackoffMs,
  type PendingStateWrite,
  type RetryPolicy,
} from './retry-policy.js';
import { chooseNextState, isValidTransition, retryTarget } from './transitions.js';

export { chooseNextState, isValidTransition, retryTarget } from './transitions.js';
export { DEFAULT_RETRY_POLICY, DEFAULT_STUCK_AFTER_MS, STATE_WRITE_RETRY_POLICY, retryBackoffMs, type PendingStateWrite, type RetryPolicy } from './retry-policy.js';

export type State = MirrorPartitionStateValue;

/** (mirror, topic id, partition): the key of every `__mirror_state` record. */
export interface MirrorPartitionKey {
  readonly mirrorName: string;
  readonly topicId: string;
  readonly topicName: string;
  readonly partition: number;
}

/**
 * Each key object's string, made once: the machine looks a partition up several times per
 * transition, and a freshly concatenated string is hashed anew at every lookup. Keys are
 * immutable, so the string made for an object stays right for it.
 */
const keyStrings = new WeakMap<MirrorPartitionKey, string>();

export function partitionKeyString(k: MirrorPartitionKey): string {
  let s = keyStrings.get(k);
  if (s === undefined) {
    s = `${k.mirrorName}:${k.topicId}:${k.partition}`;
    keyStrings.set(k, s);
  }
  return s;
}

/** What `__mirror_state` holds per partition (MirrorPartitionStateValue). */
export interface PersistedPartitionState {
  readonly state: State;
  readonly previousState: State;
  /** Number of FAILED entries since the partition last made progress; -1 = non-retryable. */
  readonly retryAttempt: number;
  readonly errorMessage: string | null;
}

/** Persistence seam: the coordinator on `__mirror_state` (local append or WriteMirrorStates). */
export interface MirrorStateStore {
  /**
   * Resolves once the record is committed; rejects when it could not be written. `leaderEpoch`
   * is the epoch this node leads the partition under (the coordinator fences older ones); absent,
   * the store takes the node's image.
   */
  writeState(key: MirrorPartitionKey, value: PersistedPartitionState, leaderEpoch?: number): Promise<void>;
}

/**
 * A failure that retrying cannot fix (source topic deleted, source cluster id changed, loop). A
 * subclass rather than a plain KafkaError because the state machine must tell it apart by type:
 * it is stored with RetryAttempt -1 whatever its code says, since a code's `retriable` flag is
 * about resending one request (UNKNOWN_TOPIC_ID is retriable) and not about a mirror partition.
 */
export class NonRetryableMirrorError extends KafkaError {}

/** Thrown by `ActionRun.exclusive` when the partition moved on before the step could start. */
export class SupersededActionError extends Error {}

/**
 * One run of a state's action. The partition can move on while the action waits on the network
 * (a stop arriving during a truncation's source lookups), so a step that changes the log runs
 * through `exclusive`: it starts only while the run is still the partition's current
 * one, and never beside another run's exclusive step of the same partition (a new state's action
 * waits until the old one's truncation has finished instead of interleaving with it).
 */
export interface ActionRun {
  /** True while no transition has been applied since this run's state was entered. */
  isCurrent(): boolean;
  /** Runs `step` under the partition's action lock if still current; else throws SupersededActionError. */
  exclusive<T>(step: () => Promise<T>): Promise<T>;
}

/**
 * The work done on entering a state. The action requests the next transition itself (e.g.
 * LOG_TRUNCATION truncates then calls `machine.transition(key, MIRRORING, { expectedFrom:
 * LOG_TRUNCATION })`). A thrown error moves the partition to FAILED (non-retryable when it is a
 * NonRetryableMirrorError), unless the run is no longer current.
 */
export type StateAction = (key: MirrorPartitionKey, machine: MirrorStateMachine, run: ActionRun) => Promise<void> | void;

interface TransitionOptions {
  /** Apply only when the partition is still in this state (guards late actions). */
  readonly expectedFrom?: State;
  /** For FAILED: the reason shown by describe --failed. */
  readonly errorMessage?: string;
  /** For FAILED: never retry. */
  readonly nonRetryable?: boolean;
  /**
   * For FAILED: the failure comes from outside the state's action (the fetcher, the source sync).
   * It does not apply to a partition that is STOPPING or STOPPED: neither fetches, and a desired
   * STOPPED must end in STOPPED whatever the source does.
   */
  readonly external?: boolean;
  /**
   * Rewrite the persisted state unchanged, at this node's leader epoch, and run no action: a new
   * leader's claim on a partition it has nothing to do for (see `resume`).
   */
  readonly claim?: boolean;
}

interface Entry {
  key: MirrorPartitionKey;
  persisted: PersistedPartitionState | null;
  desired: State;
  chain: Promise<unknown>;
  retryTimer: CancelTimer | null;
  /** Bumped on every applied transition; an action whose generation is stale is ignored. */
  generation: number;
  /** Tail of the exclusive steps of this partition's action runs. */
  actionLock: Promise<unknown>;
  /** The latest transition whose write failed, retried by `writeRetryTimer`. */
  pendingWrite: (PendingStateWrite & { readonly from: State }) | null;
  writeRetryTimer: CancelTimer | null;
  /** The leader epoch this node leads the partition under (-1 unknown); state writes carry it. */
  leaderEpoch: number;
  /** State writes of this partition not answered yet (each may have landed already). */
  writing: number;
  /**
   * The leader epoch of this node's last state write of the partition that landed (-1 none): the
   * state it holds is the persisted one as of that epoch. Writes of an older epoch are fenced once
   * it landed, so at the epoch the image names it is the persisted state.
   */
  confirmedEpoch: number;
  /** Waiting for `writing` to reach 0. */
  settleWaiters: (() => void)[];
}

interface MirrorStateMachineOptions {
  readonly store: MirrorStateStore;
  readonly actions: Partial<Record<State, StateAction>>;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly retry?: RetryPolicy;
  /** Backoff of failed state writes (default STATE_WRITE_RETRY_POLICY). */
  readonly writeRetry?: RetryPolicy;
  /** See `stuck()` (default DEFAULT_STUCK_AFTER_MS). */
  readonly stuckAfterMs?: number;
  readonly random?: () => number;
  /** Called after every applied transition (metrics, describe caches, tests). */
  readonly onTransition?: (key: MirrorPartitionKey, from: State | null, to: PersistedPartitionState) => void;
  /** Called when a state write or an action fails in a way that is only logged. */
  readonly onError?: (key: MirrorPartitionKey, err: unknown) => void;
  /** Called when an action ended after its partition had moved on (`ran` is the action's state). */
  readonly onSuperseded?: (key: MirrorPartitionKey, ran: State, now: State) => void;
  /**
   * A state write carrying leader epoch `epoch` was fenced: a newer leader of the partition has
   * written since, so what this node holds may not be the persisted state any more. The write is
   * not retried (it was computed from that state); the owner re-reads the partition once its
   * image names an epoch above `epoch`.
   */
  readonly onFenced?: (key: MirrorPartitionKey, epoch: number) => void;
}

export class MirrorStateMachine {
  private readonly entries = new Map<string, Entry>();
  private readonly retry: RetryPolicy;
  private readonly random: () => number;
  private closed = false;

  constructor(private readonly opts: MirrorStateMachineOptions) {
    this.retry = opts.retry ?? DEFAULT_RETRY_POLICY;
    this.random = opts.random ?? Math.random;
  }

  /** Current persisted state (UNKNOWN when nothing is known). */
  state(key: MirrorPartitionKey): State {
    return this.entries.get(partitionKeyString(key))?.persisted?.state ?? S.UNKNOWN;
  }

  /**
   * Whether a state write of the partition is unanswered (it may have landed: `state()` may be
   * behind what is persisted). A failed write waiting for its retry does not count: it may fail
   * for good, and a STOPPED partition must not stay read-only for it.
   */
  isSettling(key: MirrorPartitionKey): boolean {
    return (this.entries.get(partitionKeyString(key))?.writing ?? 0) > 0;
  }

  /** Resolves once no state write of the partition is unanswered (at once when none is). */
  settled(key: MirrorPartitionKey): Promise<void> {
    const e = this.entries.get(partitionKeyString(key));
    if (e === undefined || e.writing === 0) return Promise.resolve();
    return new Promise((resolve) => e.settleWaiters.push(resolve));
  }

  /** See Entry.confirmedEpoch: -1 when this node has not written the partition's state. */
  confirmedEpochOf(key: MirrorPartitionKey): number {
    return this.entries.get(partitionKeyString(key))?.confirmedEpoch ?? -1;
  }

  /**
   * Writes the resting state (PAUSED, STOPPED, FAILED) the partition holds back unchanged at this
   * node's leader epoch, as a new leader does (see `resume`). True when it landed or there was
   * nothing to claim (an active state's own writes carry the epoch).
   */
  async claim(key: MirrorPartitionKey): Promise<boolean> {
    const e = this.entries.get(partitionKeyString(key));
    if (e === undefined || e.persisted === null || e.leaderEpoch < 0) return true;
    const held = e.persisted.state;
    if (held !== S.PAUSED && held !== S.STOPPED && held !== S.FAILED) return true;
    return this.transition(key, held, { expectedFrom: held, claim: true });
  }

  snapshot(key: MirrorPartitionKey): PersistedPartitionState | null {
    return this.entries.get(partitionKeyString(key))?.persisted ?? null;
  }

  /**
   * The transition a partition is stuck on: its state write has been failing for at least
   * `stuckAfterMs` (it keeps being retried). null when none.
   */
  stuck(key: MirrorPartitionKey): PendingStateWrite | null {
    const p = this.entries.get(partitionKeyString(key))?.pendingWrite ?? null;
    if (p === null || this.opts.clock.now() - p.sinceMs < (this.opts.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS)) return null;
    return { to: p.to, sinceMs: p.sinceMs, attempts: p.attempts, lastError: p.lastError };
  }

  keys(): MirrorPartitionKey[] {
    return [...this.entries.values()].map((e) => e.key);
  }

  /**
   * Registers a partition this node leads, with what the coordinator holds for it (null = nothing
   * persisted) and the topic's desired state, then applies §7.3. A FAILED partition that is still
   * retryable gets its retry scheduled again (a new leader resumes the persisted state).
   */
  async resume(key: MirrorPartitionKey, persisted: PersistedPartitionState | null, desired: State, leaderEpoch = -1): Promise<void> {
    const e = this.entry(key);
    e.persisted = persisted;
    e.desired = desired;
    e.leaderEpoch = leaderEpoch;
    // A desired STOPPED is applied at once, from FAILED too (retryable or not, retries used up or
    // not): a stop that landed while another node led the partition must not wait on a retry.
    if (persisted?.state === S.FAILED && desired !== S.STOPPED) this.scheduleRetry(e);
    else await this.reconcile(key);
    // Nothing written: the partition rests (PAUSED, STOPPED, FAILED). The coordinator fences a
    // write of an older leader epoch only once a write at a newer one has landed, so the
    // partition's previous leader, if it has not heard it was replaced, could still land a write
    // of its own after the read this node resumed from, and this node would go on holding a
    // state that is no longer the persisted one. The claim closes that window.
    if (persisted !== null && leaderEpoch >= 0 && e.generation === 0 && e.pendingWrite === null && e.writing === 0) {
      await this.transition(key, persisted.state, { expectedFrom: persisted.state, claim: true });
    }
  }

  /** The topic's desired state changed (MirrorTopicStateChangeRecord); applies §7.3. */
  async setDesired(key: MirrorPartitionKey, desired: State, leaderEpoch?: number): Promise<void> {
    const e = this.entry(key);
    e.desired = desired;
    if (leaderEpoch !== undefined) e.leaderEpoch = leaderEpoch;
    await this.reconcile(key);
  }

  /**
   * This node still leads the partition, now under `leaderEpoch` (its own bump, or a new term
   * seen by the manager). Later state writes carry it; a node that stopped leading never calls
   * this, so its late writes keep the epoch it led under and are fenced.
   */
  noteLeaderEpoch(key: MirrorPartitionKey, leaderEpoch: number): void {
    const e = this.entries.get(partitionKeyString(key));
    if (e !== undefined && leaderEpoch > e.leaderEpoch) e.leaderEpoch = leaderEpoch;
  }

  /** The epoch this node leads the partition under, -1 when unknown. */
  leaderEpochOf(key: MirrorPartitionKey): number {
    return this.entries.get(partitionKeyString(key))?.leaderEpoch ?? -1;
  }

  /** The topic's desired state as this machine last heard it. */
  desired(key: MirrorPartitionKey): State {
    return this.entries.get(partitionKeyString(key))?.desired ?? S.UNKNOWN;
  }

  /** Applies §7.3 to the partition's current state. */
  async reconcile(key: MirrorPartitionKey): Promise<void> {
    const e = this.entry(key);
    const cur = e.persisted?.state ?? S.UNKNOWN;
    const next = chooseNextState(cur, e.desired);
    // Re-entering the current state only re-runs its action when nothing is running it already:
    // MIRRORING is always re-run (it re-adds fetchers), others only when resuming from a store.
    if (next === cur && cur !== S.MIRRORING && (e.generation > 0 || this.opts.actions[cur] === undefined)) return;
    if (next === S.UNKNOWN) return;
    await this.transition(key, next, { expectedFrom: cur });
  }

  /** The partition stopped being led here: forget it and cancel its retry timer. */
  forget(key: MirrorPartitionKey): void {
    const k = partitionKeyString(key);
    const e = this.entries.get(k);
    if (e === undefined) return;
    e.retryTimer?.();
    this.clearPendingWrite(e);
    e.generation++;
    this.entries.delete(k);
    for (const w of e.settleWaiters.splice(0)) w();
  }

  /**
   * Takes the partition on again from what is persisted, as a new leader does (`resume`), after
   * this node found it held an outdated state. An action of the old state still running is
   * superseded, and the new state's action waits for its exclusive step to end.
   */
  async retake(key: MirrorPartitionKey, persisted: PersistedPartitionState | null, desired: State, leaderEpoch: number): Promise<void> {
    const lock = this.entries.get(partitionKeyString(key))?.actionLock;
    this.forget(key);
    if (lock !== undefined) this.entry(key).actionLock = lock;
    await this.resume(key, persisted, desired, leaderEpoch);
  }

  /** The partition made progress (data appended / caught up): retry counting starts over. */
  markHealthy(key: MirrorPartitionKey): void {
    const e = this.entries.get(partitionKeyString(key));
    if (e?.persisted && e.persisted.retryAttempt > 0 && e.persisted.state === S.MIRRORING) {
      e.persisted = { ...e.persisted, retryAttempt: 0, errorMessage: null };
    }
  }

  /**
   * Moves the partition to FAILED with a reason: a failure seen outside the state's action (the
   * fetcher, the source sync), which leaves a STOPPING or STOPPED partition alone.
   */
  fail(key: MirrorPartitionKey, err: unknown): Promise<boolean> {
    const nonRetryable = err instanceof NonRetryableMirrorError;
    const message = err instanceof Error ? err.message : String(err);
    return this.transition(key, S.FAILED, { errorMessage: message, nonRetryable, external: true });
  }

  /**
   * Persists `to`, then runs its action. Resolves true when the transition was applied, false
   * when it was illegal, stale (expectedFrom no longer holds) or the write failed.
   */
  transition(key: MirrorPartitionKey, to: State, options: TransitionOptions = {}): Promise<boolean> {
    const e = this.entry(key);
    const run = e.chain.then(() => this.applyTransition(e, to, options));
    e.chain = run.catch(() => undefined);
    return run;
  }

  close(): void {
    this.closed = true;
    for (const e of this.entries.values()) {
      e.retryTimer?.();
      e.retryTimer = null;
      this.clearPendingWrite(e);
      e.generation++;
      for (const w of e.settleWaiters.splice(0)) w();
    }
  }

  private entry(key: MirrorPartitionKey): Entry {
    const k = partitionKeyString(key);
    let e = this.entries.get(k);
    if (e === undefined) {
      e = {
        key,
        persisted: null,
        desired: S.UNKNOWN,
        chain: Promise.resolve(),
        retryTimer: null,
        generation: 0,
        actionLock: Promise.resolve(),
        pendingWrite: null,
        writeRetryTimer: null,
        leaderEpoch: -1,
        writing: 0,
        confirmedEpoch: -1,
        settleWaiters: [],
      };
      this.entries.set(k, e);
    }
    return e;
  }

  private async applyTransition(e: Entry, to: State, options: TransitionOptions): Promise<boolean> {
    if (this.closed || this.entries.get(partitionKeyString(e.key)) !== e) return false;
    const cur = e.persisted?.state ?? null;
    const curOrUnknown = cur ?? S.UNKNOWN;
    if (options.expectedFrom !== undefined && curOrUnknown !== options.expectedFrom) return false;
    if (!isValidTransition(cur === S.UNKNOWN ? null : cur, to)) return false;
    if (options.external === true && (cur === S.STOPPING || cur === S.STOPPED)) return false;

    const next = options.claim === true ? e.persisted : this.nextPersisted(e.persisted, to, options);
    if (next === null) return false;
    e.writing++;
    const epoch = e.leaderEpoch;
    try {
      await this.opts.store.writeState(e.key, next, epoch < 0 ? undefined : epoch);
    } catch (err) {
      this.opts.onError?.(e.key, err);
      if (err instanceof KafkaError && err.code === ErrorCode.FENCED_LEADER_EPOCH && epoch >= 0) {
        // A newer leader wrote: this transition started from a state that may be outdated, and a
        // retry at a newer epoch would land it over the newer leader's. Nothing pending survives.
        this.clearPendingWrite(e);
        this.opts.onFenced?.(e.key, epoch);
      } else {
        this.scheduleWriteRetry(e, curOrUnknown, to, options, err);
      }
      return false;
    } finally {
      e.writing--;
      if (e.writing === 0) for (const w of e.settleWaiters.splice(0)) w();
    }
    if (epoch > e.confirmedEpoch) e.confirmedEpoch = epoch;
    if (this.closed || this.entries.get(partitionKeyString(e.key)) !== e) return false;
    if (options.claim === true) {
      // Unchanged and no action: a pending retry of a FAILED partition stays as it was.
      if (e.pendingWrite?.to === to) this.clearPendingWrite(e);
      return true;
    }
    e.retryTimer?.();
    e.retryTimer = null;
    // Whatever was pending is either this transition or overtaken by it (a retry of it would no
    // longer start from the state it was asked from).
    this.clearPendingWrite(e);
    e.persisted = next;
    const generation = ++e.generation;
    this.opts.onTransition?.(e.key, cur, next);
    if (to === S.FAILED) {
      // A desired STOPPED wins over a failure: stop now, or, when the stop itself failed, retry it.
      if (e.desired === S.STOPPED && next.previousState !== S.STOPPING) void this.reconcile(e.key);
      else this.scheduleRetry(e);
    } else if (to === S.MIRRORING && e.desired !== S.MIRRORING && e.desired !== S.UNKNOWN) {
      // A pause or stop arrived while truncating/fencing/retrying: apply it now instead of
      // starting a fetcher (queued behind this transition on the partition's chain).
      void this.reconcile(e.key);
    } else {
      this.runAction(e, to, generation);
      // A resting state reached while the desired state moved on (a resume during PAUSING, a
      // start during STOPPING): apply it now, nothing else would.
      if ((to === S.PAUSED || to === S.STOPPED) && e.desired !== S.UNKNOWN && chooseNextState(to, e.desired) !== to) void this.reconcile(e.key);
    }
    return true;
  }

  private nextPersisted(prev: PersistedPartitionState | null, to: State, options: TransitionOptions): PersistedPartitionState {
    const prevState = prev?.state ?? S.UNKNOWN;
    if (to === S.FAILED) {
      const wasFailed = prevState === S.FAILED;
      const previousState = wasFailed ? (prev?.previousState ?? S.UNKNOWN) : prevState;
      const priorAttempts = prev !== null && prev.retryAttempt > 0 ? prev.retryAttempt : 0;
      const retryAttempt = options.nonRetryable === true || (wasFailed && prev?.retryAttempt === -1) ? -1 : priorAttempts + 1;
      return { state: S.FAILED, previousState, retryAttempt, errorMessage: options.errorMessage ?? prev?.errorMessage ?? null };
    }
    // An operator restart (stop, then start) clears the failure history.
    const fresh = to === S.STOPPING || to === S.STOPPED || (to === S.LOG_TRUNCATION && prevState !== S.FAILED);
    return {
      state: to,
      previousState: prevState,
      retryAttempt: fresh || prev === null ? 0 : Math.max(0, prev.retryAttempt),
      errorMessage: fresh || prev === null ? null : prev.errorMessage,
    };
  }

  private runAction(e: Entry, state: State, generation: number): void {
    const action = this.opts.actions[state];
    if (action === undefined) return;
    const stillCurrent = (): boolean => !this.closed && e.generation === generation && this.entries.get(partitionKeyString(e.key)) === e;
    const run: ActionRun = {
      isCurrent: stillCurrent,
      exclusive: <T>(step: () => Promise<T>): Promise<T> => {
        const next = e.actionLock.then(() => {
          if (!stillCurrent()) throw new SupersededActionError(`${mirrorStateName(state)} was superseded`);
          return step();
        });
        e.actionLock = next.catch(() => undefined);
        return next;
      },
    };
    Promise.resolve()
      .then(() => action(e.key, this, run))
      .catch((err: unknown) => {
        if (!stillCurrent()) {
          this.opts.onSuperseded?.(e.key, state, this.state(e.key));
          return;
        }
        void this.transition(e.key, S.FAILED, {
          expectedFrom: state,
          errorMessage: err instanceof Error ? err.message : String(err),
          nonRetryable: err instanceof NonRetryableMirrorError,
        });
      });
  }

  /**
   * The write of `from → to` failed: try it again later, from the same state only (a FAILED
   * asked for while MIRRORING must not land on a partition that has since been STOPPED). One
   * pending write per partition: a newer failed transition replaces an older one, which it
   * overtakes anyway (the desired state is re-applied whenever a transition is applied).
   */
  private scheduleWriteRetry(e: Entry, from: State, to: State, options: TransitionOptions, err: unknown): void {
    if (this.closed || this.entries.get(partitionKeyString(e.key)) !== e) return;
    const prev = e.pendingWrite;
    const same = prev !== null && prev.to === to && prev.from === from;
    const attempts = same ? prev.attempts + 1 : 1;
    const lastError = err instanceof Error ? err.message : String(err);
    e.writeRetryTimer?.();
    e.pendingWrite = { from, to, sinceMs: same ? prev.sinceMs : this.opts.clock.now(), attempts, lastError };
    const delay = retryBackoffMs(this.opts.writeRetry ?? STATE_WRITE_RETRY_POLICY, attempts, this.random);
    e.writeRetryTimer = this.opts.timers.schedule(delay, () => {
      e.writeRetryTimer = null;
      if (this.closed || this.entries.get(partitionKeyString(e.key)) !== e) return;
      void this.transition(e.key, to, { ...options, expectedFrom: from });
    });
  }

  private clearPendingWrite(e: Entry): void {
    e.writeRetryTimer?.();
    e.writeRetryTimer = null;
    e.pendingWrite = null;
  }

  private scheduleRetry(e: Entry): void {
    const p = e.persisted;
    if (p === null || p.state !== S.FAILED || this.closed) return;
    // A failed stop is retried without limit: the operator asked for a writable topic, and a
    // FAILED partition is read-only (non-retryable and max.attempts concern the mirroring).
    const stopping = e.desired === S.STOPPED;
    if (!stopping) {
      if (p.retryAttempt < 0) return; // non-retryable
      if (this.retry.maxAttempts === 0 || p.retryAttempt > this.retry.maxAttempts) return;
    }
    e.retryTimer?.();
    const delay = retryBackoffMs(this.retry, Math.max(1, p.retryAttempt), this.random);
    const generation = e.generation;
    e.retryTimer = this.opts.timers.schedule(delay, () => {
      e.retryTimer = null;
      if (this.closed || e.generation !== generation) return;
      const target = e.desired === S.STOPPED ? S.STOPPING : retryTarget(p.previousState);
      void this.transition(e.key, target, { expectedFrom: S.FAILED });
    });
  }

  /** For describe: "n/max" or "NonRetryable". */
  retryLabel(key: MirrorPartitionKey): string {
    const p = this.snapshot(key);
    if (p === null) return '0/' + this.retry.maxAttempts;
    return p.retryAttempt < 0 ? 'NonRetryable' : `${p.retryAttempt}/${this.retry.maxAttempts}`;
  }

  describe(key: MirrorPartitionKey): string {
    return mirrorStateName(this.state(key));
  }
}
