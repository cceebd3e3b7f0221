/**
 * The read-only guard takes a partition as writable only once this leader has loaded its
 * persisted state and it is STOPPED. Before, a partition not loaded yet was writable as soon as
 * its topic's desired state was STOPPED: if its persisted state was STOPPING (a stop a previous
 * leader did not finish), client batches landed before STOPPING was redone, took the last
 * mirrored epoch's place and could open a transaction that STOPPING's markers then aborted.
 * The real guard over the real state machine; the store and the binding are the surroundings.
 */
import { realTimers, systemClock } from '../../src/common/time.js';
import { describe, expect, it } from 'vitest';
import type { MirrorHost, MirrorTopicBinding } from '../../src/mirror/mirror-host.js';
import { MirrorPartitionState as S } from '../../src/mirror/mirror-partition-state.js';
import { MirrorProduceGuard } from '../../src/mirror/produce-guard.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { MirrorStateMachine, partitionKeyString, type MirrorPartitionKey, type PersistedPartitionState } from '../../src/mirror/state-machine.js';

const KEY: MirrorPartitionKey = { mirrorName: 'm', topicId: 'id-t', topicName: 't', partition: 0 };
const STOPPED_BINDING: MirrorTopicBinding = { topicName: 't', topicId: 'id-t', mirrorName: 'm', desiredState: S.STOPPED, lastStateChangeOffset: 7 };

function setup(writeState: () => Promise<void> = () => Promise.resolve(), imageEpoch: () => number | undefined = () => undefined) {
  const tracked = new Set<string>();
  const machine = new MirrorStateMachine({
    store: { writeState },
    clock: systemClock,
    timers: realTimers,
    actions: {
      // STOPPING's markers and producer reset take a while; the test ends them by hand.
      [S.STOPPING]: () => new Promise<void>(() => undefined),
    },
  });
  const bindings = new Map<string, MirrorTopicBinding>([
    ['t', STOPPED_BINDING],
    ['mirrored', { ...STOPPED_BINDING, topicName: 'mirrored', topicId: 'id-m', desiredState: S.MIRRORING }],
  ]);
  const host = { mirrorTopicBinding: (topic: string) => bindings.get(topic), leaderEpoch: () => imageEpoch() } as unknown as MirrorHost;
  const guard = new MirrorProduceGuard({ host, machine, keyFor: () => KEY, isTracked: (k) => tracked.has(partitionKeyString(k)) });
  return { machine, guard, tracked };
}

const persisted = (state: PersistedPartitionState['state']): PersistedPartitionState => ({ state, previousState: S.MIRRORING, retryAttempt: 0, errorMessage: null });

describe('the read-only guard of a mirror partition', () => {
  it('refuses writes to a partition whose persisted state this leader has not loaded, even with desired STOPPED', () => {
    const { guard } = setup();
    expect(guard.isProduceAllowed('t', 0)).toBe(false);
    // Being stopped: the client retries (NOT_LEADER_OR_FOLLOWER) until the partition is STOPPED.
    expect(guard.writeError('t', 0)).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    expect(guard.writeError('mirrored', 0)).toBe(ErrorCode.READ_ONLY_TOPIC);
    expect(guard.isProduceAllowed('not-mirrored', 0)).toBe(true);
  });

  it('refuses writes while a loaded STOPPING is redone, and takes them once STOPPED is persisted', async () => {
    const { machine, guard, tracked } = setup();
    tracked.add(partitionKeyString(KEY));
    await machine.resume(KEY, persisted(S.STOPPING), S.STOPPED);
    expect(machine.state(KEY)).toBe(S.STOPPING);
    expect(guard.writeError('t', 0)).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    // STOPPING's action ends: STOPPED is persisted.
    expect(await machine.transition(KEY, S.STOPPED, { expectedFrom: S.STOPPING })).toBe(true);
    expect(machine.state(KEY)).toBe(S.STOPPED);
    expect(guard.isProduceAllowed('t', 0)).toBe(true);
  });

  it('refuses writes while this leader writes a transition out of STOPPED, which may have landed before its answer', async () => {
    // A start then a stop in quick succession: the leader, STOPPED, writes LOG_TRUNCATION; the
    // record is appended, and its answer is still on its way when the desired state is STOPPED
    // again. A batch taken then would be cut by the truncation that follows.
    let land: (() => void) | null = null;
    let hold = false;
    const { machine, guard, tracked } = setup(() => (hold ? new Promise<void>((r) => (land = r)) : Promise.resolve()));
    tracked.add(partitionKeyString(KEY));
    await machine.resume(KEY, persisted(S.STOPPED), S.STOPPED);
    expect(guard.isProduceAllowed('t', 0)).toBe(true);
    hold = true;
    const leaving = machine.transition(KEY, S.LOG_TRUNCATION);
    await new Promise((r) => setImmediate(r));
    expect(land).not.toBeNull();
    expect(machine.state(KEY)).toBe(S.STOPPED);
    expect(guard.writeError('t', 0)).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    land!();
    expect(await leaving).toBe(true);
    expect(guard.isProduceAllowed('t', 0)).toBe(false);
  });

  it('refuses writes while the image names a leader epoch the machine has not taken the partition up at', async () => {
    // This node led the partition at epoch 3 and left it STOPPED; it lost the partition and got
    // it back at epoch 5 before its manager caught up. Another leader may have persisted a start
    // meanwhile, so the STOPPED it holds says nothing of epoch 5.
    let image = 3;
    const { machine, guard, tracked } = setup(undefined, () => image);
    tracked.add(partitionKeyString(KEY));
    await machine.resume(KEY, persisted(S.STOPPED), S.STOPPED, 3);
    expect(guard.writeError('t', 0)).toBe(ErrorCode.NONE);
    image = 5;
    expect(guard.writeError('t', 0)).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    // The manager takes the partition up at 5 from what is persisted: writable again.
    await machine.resume(KEY, persisted(S.STOPPED), S.STOPPED, 5);
    expect(guard.writeError('t', 0)).toBe(ErrorCode.NONE);
  });

  it('refuses writes at a new epoch the manager has noted until its own state write at that epoch has landed', async () => {
    // The manager hears the new term (epoch 5) and notes it at once, then reads the persisted
    // state; meanwhile the machine holds the STOPPED of epoch 3 at epoch 5. Another leader, of
    // epoch 4, may have persisted a start in between: the STOPPED is known again only once this
    // node's claim at 5 lands (the simulation's seed 84001450 took two client batches there).
    let image = 3;
    const epochs: (number | undefined)[] = [];
    const { machine, guard, tracked } = setup(undefined, () => image);
    const writes = machine as unknown as { opts: { store: { writeState: (k: unknown, v: unknown, e?: number) => Promise<void> } } };
    writes.opts.store.writeState = (_k, _v, e) => (epochs.push(e), Promise.resolve());
    tracked.add(partitionKeyString(KEY));
    await machine.resume(KEY, persisted(S.STOPPED), S.STOPPED, 3);
    expect(epochs).toEqual([3]);
    expect(guard.writeError('t', 0)).toBe(ErrorCode.NONE);
    image = 5;
    machine.noteLeaderEpoch(KEY, 5);
    expect(guard.writeError('t', 0)).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    expect(await machine.claim(KEY)).toBe(true);
    expect(epochs).toEqual([3, 5]);
    expect(guard.writeError('t', 0)).toBe(ErrorCode.NONE);
  });
});
