import type { Timers } from '../../src/common/time.js';
import { KafkaError } from '../../src/protocol/kafka-error.js';
import { describe, expect, it } from 'vitest';
import { MirrorPartitionState as S } from '../../src/mirror/mirror-partition-state.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import {
  chooseNextState,
  isValidTransition,
  MirrorStateMachine,
  NonRetryableMirrorError,
  retryBackoffMs,
  type MirrorPartitionKey,
  type PersistedPartitionState,
  type State,
  type StateAction,
} from '../../src/mirror/state-machine.js';

/** Timers driven by hand: `advance(ms)` fires what is due, in order. */
class ManualTimers implements Timers {
  now = 0;
  private queue: { at: number; fn: () => void; id: number }[] = [];
  private seq = 0;
  schedule(delayMs: number, fn: () => void): () => void {
    const id = ++this.seq;
    this.queue.push({ at: this.now + delayMs, fn, id });
    return () => {
      this.queue = this.queue.filter((t) => t.id !== id);
    };
  }
  get pending(): number[] {
    return this.queue.map((t) => t.at - this.now);
  }
  async advance(ms: number): Promise<void> {
    const until = this.now + ms;
    for (;;) {
      this.queue.sort((a, b) => a.at - b.at);
      const t = this.queue[0];
      if (t === undefined || t.at > until) break;
      this.queue.shift();
      this.now = t.at;
      t.fn();
      await flush();
    }
    this.now = until;
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
}

const ALL: State[] = [S.UNKNOWN, S.LOG_TRUNCATION, S.EPOCH_FENCING, S.MIRRORING, S.PAUSING, S.PAUSED, S.STOPPING, S.STOPPED, S.FAILED];

const key: MirrorPartitionKey = { mirrorName: 'm1', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', topicName: 'orders', partition: 0 };

function setup(opts: { failWrites?: () => boolean; actions?: Partial<Record<State, StateAction>>; maxAttempts?: number; fencedBelow?: () => number } = {}) {
  const timers = new ManualTimers();
  const fenced: number[] = [];
  const writes: PersistedPartitionState[] = [];
  const writeEpochs: (number | undefined)[] = [];
  const order: string[] = [];
  const machine = new MirrorStateMachine({
    store: {
      async writeState(_k, v, leaderEpoch) {
        await Promise.resolve();
        if (opts.failWrites?.() === true) throw new Error('coordinator not available');
        const current = opts.fencedBelow?.() ?? -1;
        if (leaderEpoch !== undefined && leaderEpoch < current) throw new KafkaError(ErrorCode.FENCED_LEADER_EPOCH, `leader epoch ${leaderEpoch}, older than the current ${current}`);
        order.push(`persist:${v.state}`);
        writes.push(v);
        writeEpochs.push(leaderEpoch);
      },
    },
    actions: opts.actions ?? {},
    clock: { now: () => timers.now },
    timers,
    retry: { initialBackoffMs: 1000, maxBackoffMs: 8000, maxAttempts: opts.maxAttempts ?? 100, jitter: 0.2 },
    random: () => 0.5,
    onFenced: (_k, epoch) => fenced.push(epoch),
  });
  return { timers, writes, writeEpochs, machine, order, fenced };
}

describe('legal transitions (spec §7.2)', () => {
  it('matches the table exactly', () => {
    const allowed: Record<number, (State | null)[]> = {
      [S.LOG_TRUNCATION]: [null, S.UNKNOWN, S.STOPPED, S.FAILED],
      [S.EPOCH_FENCING]: [S.MIRRORING],
      [S.MIRRORING]: [S.LOG_TRUNCATION, S.EPOCH_FENCING, S.PAUSED, S.FAILED],
      [S.PAUSING]: [S.MIRRORING],
      [S.PAUSED]: [S.PAUSING],
      [S.STOPPING]: [null, S.UNKNOWN, S.LOG_TRUNCATION, S.EPOCH_FENCING, S.MIRRORING, S.PAUSING, S.PAUSED, S.FAILED],
      [S.STOPPED]: [S.STOPPING],
      [S.FAILED]: [null, ...ALL],
      [S.UNKNOWN]: [],
    };
    for (const to of ALL) {
      for (const from of [null, ...ALL]) {
        const expected = from === to || (allowed[to] ?? []).includes(from);
        expect(isValidTransition(from, to), `${String(from)} -> ${to}`).toBe(expected);
      }
    }
  });
});

describe('next-state choice (spec §7.3)', () => {
  it('follows the rules in order', () => {
    expect(chooseNextState(S.FAILED, S.MIRRORING)).toBe(S.FAILED);
    expect(chooseNextState(S.FAILED, S.PAUSED)).toBe(S.FAILED);
    expect(chooseNextState(S.FAILED, S.STOPPED)).toBe(S.STOPPING);
    expect(chooseNextState(S.MIRRORING, S.STOPPED)).toBe(S.STOPPING);
    expect(chooseNextState(S.STOPPED, S.STOPPED)).toBe(S.STOPPED);
    expect(chooseNextState(S.MIRRORING, S.PAUSED)).toBe(S.PAUSING);
    expect(chooseNextState(S.PAUSED, S.PAUSED)).toBe(S.PAUSED);
    expect(chooseNextState(S.PAUSED, S.MIRRORING)).toBe(S.MIRRORING);
    expect(chooseNextState(S.UNKNOWN, S.MIRRORING)).toBe(S.LOG_TRUNCATION);
    expect(chooseNextState(S.STOPPED, S.MIRRORING)).toBe(S.LOG_TRUNCATION);
    expect(chooseNextState(S.EPOCH_FENCING, S.MIRRORING)).toBe(S.EPOCH_FENCING);
    expect(chooseNextState(S.STOPPING, S.MIRRORING)).toBe(S.STOPPING);
    // A start then a pause before the leader acted: the partition starts, then pauses.
    expect(chooseNextState(S.UNKNOWN, S.PAUSED)).toBe(S.LOG_TRUNCATION);
    expect(chooseNextState(S.STOPPED, S.PAUSED)).toBe(S.LOG_TRUNCATION);
  });

  it('never chooses a transition the table forbids', () => {
    for (const cur of ALL) {
      for (const desired of [S.MIRRORING, S.PAUSED, S.STOPPED]) {
        const next = chooseNextState(cur, desired);
        if (next !== cur) expect(isValidTransition(cur === S.UNKNOWN ? null : cur, next), `${cur} → ${next} for desired ${desired}`).toBe(true);
      }
    }
  });
});

describe('MirrorStateMachine', () => {
  it('persists each state before running its action and walks start → mirroring', async () => {
    const { machine, order } = setup({
      actions: {
        [S.LOG_TRUNCATION]: async (k, m) => {
          order.push('action:truncate');
          await m.transition(k, S.MIRRORING, { expectedFrom: S.LOG_TRUNCATION });
        },
        [S.MIRRORING]: () => {
          order.push('action:fetch');
        },
      },
    });
    await machine.resume(key, null, S.MIRRORING);
    await flush();
    expect(order).toEqual([`persist:${S.LOG_TRUNCATION}`, 'action:truncate', `persist:${S.MIRRORING}`, 'action:fetch']);
    expect(machine.state(key)).toBe(S.MIRRORING);
  });

  it('does not run the action when the state write fails', async () => {
    let fail = true;
    const ran: string[] = [];
    const { machine } = setup({ failWrites: () => fail, actions: { [S.LOG_TRUNCATION]: () => void ran.push('truncate') } });
    expect(await machine.transition(key, S.LOG_TRUNCATION)).toBe(false);
    await flush();
    expect(ran).toEqual([]);
    expect(machine.state(key)).toBe(S.UNKNOWN);
    fail = false;
    expect(await machine.transition(key, S.LOG_TRUNCATION)).toBe(true);
    await flush();
    expect(ran).toEqual(['truncate']);
  });

  it('rejects illegal transitions and stale actions', async () => {
    const { machine } = setup();
    expect(await machine.transition(key, S.PAUSED)).toBe(false);
    expect(await machine.transition(key, S.LOG_TRUNCATION)).toBe(true);
    expect(await machine.transition(key, S.STOPPING)).toBe(true);
    // the truncation finishing late must not move a stopping partition to MIRRORING
    expect(await machine.transition(key, S.MIRRORING, { expectedFrom: S.LOG_TRUNCATION })).toBe(false);
    expect(machine.state(key)).toBe(S.STOPPING);
  });

  it('pause while truncating lands in PAUSED after the truncation', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { machine } = setup({
      actions: {
        [S.LOG_TRUNCATION]: async (k, m) => {
          await gate;
          await m.transition(k, S.MIRRORING, { expectedFrom: S.LOG_TRUNCATION });
        },
        [S.PAUSING]: (k, m) => m.transition(k, S.PAUSED, { expectedFrom: S.PAUSING }).then(() => undefined),
      },
    });
    await machine.resume(key, null, S.MIRRORING);
    await machine.setDesired(key, S.PAUSED);
    expect(machine.state(key)).toBe(S.LOG_TRUNCATION);
    release();
    await flush();
    expect(machine.state(key)).toBe(S.PAUSED);
    await machine.setDesired(key, S.MIRRORING);
    await flush();
    expect(machine.state(key)).toBe(S.MIRRORING);
  });

  it('FAILED retries with exponential backoff and jitter, keeping the original previous state', async () => {
    let failures = 3;
    const { machine, timers, writes } = setup({
      actions: {
        [S.MIRRORING]: () => {
          if (failures-- > 0) throw new Error('source broker unreachable');
        },
      },
    });
    await machine.resume(key, { state: S.MIRRORING, previousState: S.LOG_TRUNCATION, retryAttempt: 0, errorMessage: null }, S.MIRRORING);
    await flush();
    expect(machine.snapshot(key)).toEqual({ state: S.FAILED, previousState: S.MIRRORING, retryAttempt: 1, errorMessage: 'source broker unreachable' });
    // random() = 0.5 → jitter factor 1.0: 1000, 2000, 4000 ms
    expect(timers.pending).toEqual([1000]);
    await timers.advance(999);
    expect(machine.state(key)).toBe(S.FAILED);
    await timers.advance(1);
    expect(machine.snapshot(key)?.retryAttempt).toBe(2);
    expect(timers.pending).toEqual([2000]);
    await timers.advance(2000);
    expect(machine.snapshot(key)?.retryAttempt).toBe(3);
    expect(timers.pending).toEqual([4000]);
    await timers.advance(4000);
    expect(machine.state(key)).toBe(S.MIRRORING);
    expect(writes.filter((w) => w.state === S.FAILED).map((w) => w.previousState)).toEqual([S.MIRRORING, S.MIRRORING, S.MIRRORING]);
  });

  it('gives up after max attempts, until the operator stops and starts the topic', async () => {
    const { machine, timers } = setup({
      maxAttempts: 2,
      actions: {
        [S.LOG_TRUNCATION]: () => {
          throw new Error('no source leader');
        },
      },
    });
    await machine.resume(key, null, S.MIRRORING);
    await flush();
    await timers.advance(1000);
    await timers.advance(2000);
    expect(machine.snapshot(key)?.retryAttempt).toBe(3);
    expect(timers.pending).toEqual([]);
    await timers.advance(1_000_000);
    expect(machine.state(key)).toBe(S.FAILED);
    // stop then start clears the history
    await machine.setDesired(key, S.PAUSED); // FAILED stays FAILED for anything but a stop
    expect(machine.state(key)).toBe(S.FAILED);
    await machine.setDesired(key, S.STOPPED);
    expect(machine.state(key)).toBe(S.STOPPING);
    expect(await machine.transition(key, S.STOPPED)).toBe(true);
    expect(machine.snapshot(key)?.retryAttempt).toBe(0);
    expect(machine.snapshot(key)?.errorMessage).toBeNull();
  });

  it('never retries a non-retryable failure and says so', async () => {
    const { machine, timers } = setup({
      actions: {
        [S.MIRRORING]: () => {
          throw new NonRetryableMirrorError(ErrorCode.UNKNOWN_TOPIC_ID, 'The source topic is deleted.');
        },
      },
    });
    await machine.resume(key, { state: S.MIRRORING, previousState: S.LOG_TRUNCATION, retryAttempt: 0, errorMessage: null }, S.MIRRORING);
    await flush();
    expect(machine.snapshot(key)).toMatchObject({ state: S.FAILED, retryAttempt: -1, errorMessage: 'The source topic is deleted.' });
    expect(machine.retryLabel(key)).toBe('NonRetryable');
    expect(timers.pending).toEqual([]);
    // FAILED → FAILED keeps it non-retryable
    await machine.fail(key, new Error('again'));
    expect(machine.snapshot(key)?.retryAttempt).toBe(-1);
  });

  it('a new leader resumes a persisted FAILED state and its retry', async () => {
    const { machine, timers } = setup({ actions: { [S.LOG_TRUNCATION]: (k, m) => m.transition(k, S.MIRRORING).then(() => undefined) } });
    await machine.resume(key, { state: S.FAILED, previousState: S.UNKNOWN, retryAttempt: 2, errorMessage: 'x' }, S.MIRRORING);
    expect(timers.pending).toEqual([2000]);
    await timers.advance(2000);
    expect(machine.state(key)).toBe(S.MIRRORING);
  });

  it('a new leader redoes a half-done STOPPING', async () => {
    const ran: string[] = [];
    const { machine } = setup({
      actions: {
        [S.STOPPING]: async (k, m) => {
          ran.push('stop-steps');
          await m.transition(k, S.STOPPED, { expectedFrom: S.STOPPING });
        },
      },
    });
    await machine.resume(key, { state: S.STOPPING, previousState: S.MIRRORING, retryAttempt: 0, errorMessage: null }, S.STOPPED);
    await flush();
    expect(ran).toEqual(['stop-steps']);
    expect(machine.state(key)).toBe(S.STOPPED);
  });

  it('backoff is capped and jittered by ±20 %', () => {
    const p = { initialBackoffMs: 1000, maxBackoffMs: 300_000, maxAttempts: 100, jitter: 0.2 };
    expect(retryBackoffMs(p, 1, () => 0)).toBe(800);
    expect(retryBackoffMs(p, 1, () => 0.999999)).toBe(1199);
    expect(retryBackoffMs(p, 4, () => 0.5)).toBe(8000);
    expect(retryBackoffMs(p, 30, () => 0.5)).toBe(300_000);
  });
});

describe('superseded actions', () => {
  it('skip the step that would add the partition to the fetcher once a pause moved it on', async () => {
    let releaseLog!: () => void;
    const logReady = new Promise<void>((r) => (releaseLog = r));
    const added: string[] = [];
    const { machine } = setup({
      actions: {
        [S.MIRRORING]: async (k, _m, run) => {
          await logReady; // e.g. waiting for the node to open the partition's log
          await run.exclusive(async () => {
            added.push(k.topicName);
          });
        },
        [S.PAUSING]: async (k, m, run) => {
          await run.exclusive(async () => undefined);
          await m.transition(k, S.PAUSED, { expectedFrom: S.PAUSING });
        },
      },
    });
    await machine.resume(key, { state: S.PAUSED, previousState: S.PAUSING, retryAttempt: 0, errorMessage: null }, S.MIRRORING);
    await flush();
    expect(machine.state(key)).toBe(S.MIRRORING);
    await machine.setDesired(key, S.PAUSED);
    await flush();
    expect(machine.state(key)).toBe(S.PAUSED);
    releaseLog();
    await flush();
    expect(added).toEqual([]);
  });
});

/** A STOPPING action that lands in STOPPED (the steps themselves are ./state-actions.ts). */
const stopsAtOnce: StateAction = async (k, m) => {
  await m.transition(k, S.STOPPED, { expectedFrom: S.STOPPING });
};

describe('a desired STOPPED always wins', () => {
  it('a new leader stops a partition persisted FAILED and non-retryable', async () => {
    const { machine } = setup({ actions: { [S.STOPPING]: stopsAtOnce } });
    // Stopped through another node while this partition's leader was down; it comes back.
    await machine.resume(key, { state: S.FAILED, previousState: S.MIRRORING, retryAttempt: -1, errorMessage: 'The source topic is deleted.' }, S.STOPPED);
    await flush();
    expect(machine.state(key)).toBe(S.STOPPED);
  });

  it('a new leader stops a partition whose retries were used up', async () => {
    const { machine } = setup({ maxAttempts: 2, actions: { [S.STOPPING]: stopsAtOnce } });
    await machine.resume(key, { state: S.FAILED, previousState: S.LOG_TRUNCATION, retryAttempt: 3, errorMessage: 'no source leader' }, S.STOPPED);
    await flush();
    expect(machine.state(key)).toBe(S.STOPPED);
  });

  it('a new leader stops a partition that failed retryably, without waiting for its retry', async () => {
    const { machine, timers } = setup({ actions: { [S.STOPPING]: stopsAtOnce } });
    await machine.resume(key, { state: S.FAILED, previousState: S.MIRRORING, retryAttempt: 5, errorMessage: 'x' }, S.STOPPED);
    await flush();
    expect(machine.state(key)).toBe(S.STOPPED);
    expect(timers.pending).toEqual([]);
  });

  it('a failure from outside (fetcher, source sync) does not turn STOPPING into FAILED', async () => {
    let release!: () => void;
    const groupSync = new Promise<void>((r) => (release = r));
    const { machine } = setup({
      actions: {
        [S.STOPPING]: async (k, m) => {
          await groupSync; // STOPPING's last group offset sync
          await m.transition(k, S.STOPPED, { expectedFrom: S.STOPPING });
        },
      },
    });
    await machine.resume(key, { state: S.MIRRORING, previousState: S.LOG_TRUNCATION, retryAttempt: 0, errorMessage: null }, S.STOPPED);
    await flush();
    expect(machine.state(key)).toBe(S.STOPPING);
    // The fetcher's second "topic missing" answer, or the cluster-id check, lands meanwhile.
    expect(await machine.fail(key, new NonRetryableMirrorError(ErrorCode.UNKNOWN_TOPIC_ID, 'The source topic is deleted.'))).toBe(false);
    release();
    await flush();
    expect(machine.state(key)).toBe(S.STOPPED);
    // A stopped partition is writable and stays so.
    expect(await machine.fail(key, new NonRetryableMirrorError(ErrorCode.INCONSISTENT_CLUSTER_ID, 'changed'))).toBe(false);
    expect(machine.state(key)).toBe(S.STOPPED);
  });

  it('a partition with no persisted state at all is stopped', async () => {
    const { machine } = setup({ actions: { [S.STOPPING]: stopsAtOnce } });
    // Started and stopped through other nodes before its leader ever wrote a state.
    await machine.resume(key, null, S.STOPPED);
    await flush();
    expect(machine.state(key)).toBe(S.STOPPED);
  });

  it('a failure that lands just before the stop is overtaken by it', async () => {
    const { machine } = setup({ actions: { [S.STOPPING]: stopsAtOnce } });
    await machine.resume(key, { state: S.MIRRORING, previousState: S.LOG_TRUNCATION, retryAttempt: 0, errorMessage: null }, S.MIRRORING);
    await flush();
    const failed = machine.fail(key, new NonRetryableMirrorError(ErrorCode.UNKNOWN_TOPIC_ID, 'The source topic is deleted.'));
    const stopped = machine.setDesired(key, S.STOPPED);
    await Promise.all([failed, stopped]);
    await flush();
    expect(machine.state(key)).toBe(S.STOPPED);
  });

  it('a STOPPING whose own step fails non-retryably is tried again until it lands', async () => {
    let failures = 2;
    const { machine, timers } = setup({
      maxAttempts: 0,
      actions: {
        [S.STOPPING]: async (k, m) => {
          if (failures-- > 0) throw new NonRetryableMirrorError(ErrorCode.KAFKA_STORAGE_ERROR, 'writing MIRROR_PID_RESET failed');
          await m.transition(k, S.STOPPED, { expectedFrom: S.STOPPING });
        },
      },
    });
    await machine.resume(key, { state: S.MIRRORING, previousState: S.LOG_TRUNCATION, retryAttempt: 0, errorMessage: null }, S.STOPPED);
    await flush();
    expect(machine.state(key)).toBe(S.FAILED);
    await timers.advance(60_000);
    expect(machine.state(key)).toBe(S.STOPPED);
  });
});

describe('a resume during PAUSING', () => {
  it('lands in MIRRORING once the pause has finished', async () => {
    let release!: () => void;
    const removal = new Promise<void>((r) => (release = r));
    const { machine } = setup({
      actions: {
        [S.PAUSING]: async (k, m) => {
          await removal; // the fetcher's in-flight append finishing
          await m.transition(k, S.PAUSED, { expectedFrom: S.PAUSING });
        },
      },
    });
    await machine.resume(key, { state: S.MIRRORING, previousState: S.LOG_TRUNCATION, retryAttempt: 0, errorMessage: null }, S.PAUSED);
    await flush();
    expect(machine.state(key)).toBe(S.PAUSING);
    await machine.setDesired(key, S.MIRRORING);
    release();
    await flush();
    expect(machine.state(key)).toBe(S.MIRRORING);
  });

  it('a new leader finds PAUSING with desired MIRRORING and resumes', async () => {
    const { machine } = setup({ actions: { [S.PAUSING]: (k, m) => m.transition(k, S.PAUSED, { expectedFrom: S.PAUSING }).then(() => undefined) } });
    await machine.resume(key, { state: S.PAUSING, previousState: S.MIRRORING, retryAttempt: 0, errorMessage: null }, S.MIRRORING);
    await flush();
    expect(machine.state(key)).toBe(S.MIRRORING);
  });
});

describe('state-write fencing', () => {
  it('writes carry the epoch the partition is led under, not the one the image has moved to', async () => {
    let release!: () => void;
    const lookups = new Promise<void>((r) => (release = r));
    const { machine, writeEpochs } = setup({
      actions: {
        [S.LOG_TRUNCATION]: async (k, m) => {
          await lookups;
          await m.transition(k, S.MIRRORING, { expectedFrom: S.LOG_TRUNCATION });
        },
      },
    });
    await machine.resume(key, null, S.MIRRORING, 5);
    await flush();
    release();
    await flush();
    expect(machine.state(key)).toBe(S.MIRRORING);
    expect(writeEpochs).toEqual([5, 5]);
    machine.noteLeaderEpoch(key, 7);
    await machine.setDesired(key, S.PAUSED);
    expect(writeEpochs.at(-1)).toBe(7);
  });

  it('a fenced write is not tried again at a newer epoch: the owner is told, and re-reads', async () => {
    // This node claimed a STOPPED it read at epoch 3 while another leader, at epoch 4, had just
    // persisted a start over it. Retried once the node noted its own new term (5), the claim
    // would have written the old STOPPED over the start (the simulation's seed 84001450).
    let current = 4;
    const { machine, writes, fenced, timers } = setup({ fencedBelow: () => current });
    const stopped: PersistedPartitionState = { state: S.STOPPED, previousState: S.STOPPING, retryAttempt: 0, errorMessage: null };
    await machine.resume(key, stopped, S.STOPPED, 3);
    await flush();
    expect(writes).toEqual([]);
    expect(fenced).toEqual([3]);
    current = 5;
    machine.noteLeaderEpoch(key, 5);
    await timers.advance(60_000);
    expect(writes).toEqual([]);
    expect(machine.stuck(key)).toBeNull();
  });
});

describe('a new leader with nothing to do claims the partition at its epoch', () => {
  const at = (state: State, previousState: State, retryAttempt = 0): PersistedPartitionState => ({ state, previousState, retryAttempt, errorMessage: null });

  it('rewrites a resting state unchanged at its leader epoch, so an older leader\'s late write is fenced', async () => {
    for (const [persisted, desired] of [
      [at(S.PAUSED, S.PAUSING), S.PAUSED],
      [at(S.STOPPED, S.STOPPING), S.STOPPED],
      [at(S.FAILED, S.LOG_TRUNCATION, -1), S.PAUSED],
    ] as const) {
      const { machine, writes, writeEpochs } = setup();
      await machine.resume(key, persisted, desired, 9);
      await flush();
      expect(writes, `${persisted.state} with desired ${desired}`).toEqual([persisted]);
      expect(writeEpochs).toEqual([9]);
      expect(machine.snapshot(key)).toEqual(persisted);
    }
  });

  it('tries the claim again when the coordinator is not available', async () => {
    let failing = true;
    const { machine, writes, writeEpochs, timers } = setup({ failWrites: () => failing });
    await machine.resume(key, at(S.PAUSED, S.PAUSING), S.PAUSED, 4);
    await flush();
    expect(writes).toEqual([]);
    failing = false;
    await timers.advance(60_000);
    expect(writes).toEqual([at(S.PAUSED, S.PAUSING)]);
    expect(writeEpochs).toEqual([4]);
  });

  it('a partition that failed retryably keeps its retry after the claim', async () => {
    const failed = at(S.FAILED, S.MIRRORING, 1);
    const { machine, writes, timers } = setup();
    await machine.resume(key, failed, S.MIRRORING, 3);
    await flush();
    expect(writes).toEqual([failed]);
    await timers.advance(2_000);
    expect(writes.at(-1)?.state).toBe(S.MIRRORING);
  });
});
