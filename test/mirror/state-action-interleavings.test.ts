/**
 * Interleavings of the mirror state actions (KIP-1279 spec §8.5, §8.6, §9.3) with leader changes
 * and replica faults, over the real state machine, the real actions and real partition logs on
 * disk; the source is answered by a test double of the lookups, the fetcher by a double that holds
 * nothing (these partitions never fetch in the test).
 *
 * - STOPPING redone by a new leader keeps the last mirrored epoch the first one recorded, though
 *   the destination epoch moved past the markers the first leader appended.
 * - LOG_TRUNCATION's wait for the replicas holds on every attempt: a retry that finds the log
 *   already cut still waits for a replica that keeps the cut records.
 * - A state write carries the epoch the partition is led under, so a deposed leader is fenced.
 * - The mirror-level refresh runs on the mirror's owner only.
 */
import type { Timers } from '../../src/common/time.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { MirrorCoordinator, MirrorStateEntry } from '../../src/mirror/mirror-coordinator.js';
import type { ReplicaProgress } from '../../src/mirror/mirror-host.js';
import { MirrorPartitionState as S } from '../../src/mirror/mirror-partition-state.js';
import type { MirrorRuntime } from '../../src/mirror/mirror-runtime.js';
import { MirrorStateClient } from '../../src/mirror/mirror-state-client.js';
import { MirrorSourceSync } from '../../src/mirror/source-sync.js';
import { MirrorStateActions } from '../../src/mirror/state-actions.js';
import { MirrorStateMachine, type MirrorPartitionKey, type State } from '../../src/mirror/state-machine.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { MirrorTestHost } from './helpers/mirror-test-host.js';

/** Timers driven by the test; `now` is their clock. */
class StepTimers implements Timers {
  now = 1_000_000;
  private queue: { at: number; fn: () => void; id: number }[] = [];
  private seq = 0;
  schedule(delayMs: number, fn: () => void): () => void {
    const id = ++this.seq;
    this.queue.push({ at: this.now + Math.max(0, delayMs), fn, id });
    return () => {
      this.queue = this.queue.filter((t) => t.id !== id);
    };
  }
  get pending(): number {
    return this.queue.length;
  }
  /** Fires everything due within `ms`, in order, letting real I/O settle after each. */
  async advance(ms: number): Promise<void> {
    const until = this.now + ms;
    for (;;) {
      this.queue.sort((a, b) => a.at - b.at || a.id - b.id);
      const t = this.queue[0];
      if (t === undefined || t.at > until) break;
      this.queue.shift();
      this.now = t.at;
      t.fn();
      await settle();
    }
    this.now = until;
  }
}

/** Lets promises run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

/** Lets the actions run (file I/O included) until `done`, firing timers due now; fails after 2000 turns. */
async function until(timers: StepTimers, done: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !done(); i++) {
    await timers.advance(0);
    await new Promise<void>((r) => setTimeout(r, 1));
  }
  expect(done()).toBe(true);
}

class SteppedHost extends MirrorTestHost {
  readonly steps = new StepTimers();
  override readonly timers = this.steps;
  override readonly clock = { now: () => this.steps.now };
  progress: ReplicaProgress | undefined;
  replicaProgress(): ReplicaProgress | undefined {
    return this.progress;
  }
}

const works: string[] = [];
afterEach(() => {
  for (const w of works.splice(0)) rmSync(w, { recursive: true, force: true });
});

function newHost(): SteppedHost {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-action-interleavings-'));
  works.push(dir);
  return new SteppedHost(dir);
}

/** The coordinator's records as a map, fenced like MirrorCoordinator.writeFenced against `currentEpoch`. */
function coordinatorDouble(currentEpoch: () => number) {
  const lme = new Map<string, number>();
  const writes: { lastMirrorEpoch?: number; leaderEpoch?: number }[] = [];
  return {
    lme,
    writes,
    async read(_m: string, topicId: string, partition: number) {
      return { state: null, lastMirrorEpoch: lme.get(`${topicId}:${partition}`) ?? -1 };
    },
    async write(_m: string, entries: readonly { topicId: string; partition: number; lastMirrorEpoch?: number; leaderEpoch?: number }[]) {
      for (const e of entries) {
        writes.push(e);
        if (e.leaderEpoch !== undefined && e.leaderEpoch < currentEpoch()) throw Object.assign(new Error('fenced'), { code: ErrorCode.FENCED_LEADER_EPOCH });
        if (e.lastMirrorEpoch !== undefined) lme.set(`${e.topicId}:${e.partition}`, e.lastMirrorEpoch);
      }
    },
    async writeState() {},
  };
}

function runtimeDouble(lookups: { lme: number }): MirrorRuntime {
  return {
    name: 'm1',
    fingerprint: '',
    client: {} as MirrorRuntime['client'],
    fetcher: { has: () => false, addPartitions: () => undefined, removePartitions: async () => undefined, status: () => undefined, close: async () => undefined },
    lookups: { hasMirrorLoop: async () => false, lastMirrorEpoch: async () => lookups.lme },
    sourceClusterId: 'source',
  };
}

function machineOver(host: SteppedHost, coordinator: ReturnType<typeof coordinatorDouble>, rt: MirrorRuntime, seen: State[]) {
  const actions = new MirrorStateActions({
    host,
    coordinator: coordinator as unknown as MirrorStateClient,
    log: () => undefined,
    runtime: () => rt,
    isClosed: () => false,
    syncGroups: async () => undefined,
    syncConfigs: async () => undefined,
  });
  return new MirrorStateMachine({
    store: { writeState: async () => undefined },
    actions: actions.table(),
    clock: host.clock,
    timers: host.timers,
    retry: { initialBackoffMs: 1000, maxBackoffMs: 8000, maxAttempts: 10, jitter: 0 },
    onTransition: (_k, _from, to) => seen.push(to.state),
  });
}

async function mirroredTopic(host: SteppedHost, epochs: readonly number[]): Promise<MirrorPartitionKey> {
  const topicId = '6b1f2c3d-0000-4000-8000-00000000000a';
  await host.createTopic('t', 1, topicId);
  await host.controllerWrite([{ type: 'mirrorTopicState', topicId, mirrorName: 'm1', desiredState: S.MIRRORING }]);
  const log = host.log('t', 0);
  for (const [i, epoch] of epochs.entries()) {
    const batch = buildRecordBatch({ baseOffset: i, partitionLeaderEpoch: epoch, records: [{ value: Buffer.from(`source-${i}`) }] });
    expect((await log.appendAsMirror(batch)).errorCode).toBe(0);
  }
  return { mirrorName: 'm1', topicId, topicName: 't', partition: 0 };
}

describe('STOPPING redone by a new leader', () => {
  it('keeps the last mirrored epoch the first leader recorded', async () => {
    const host = newHost();
    const key = await mirroredTopic(host, [3, 3, 3]);
    const coordinator = coordinatorDouble(() => -1);
    const rt = runtimeDouble({ lme: -1 });
    await host.controllerWrite([{ type: 'mirrorTopicState', topicId: key.topicId, mirrorName: 'm1', desiredState: S.STOPPED }]);
    const first: State[] = [];
    const leader1 = machineOver(host, coordinator, rt, first);
    await leader1.resume(key, { state: S.MIRRORING, previousState: S.LOG_TRUNCATION, retryAttempt: 0, errorMessage: null }, S.STOPPED, 0);
    await until(host.steps, () => first.includes(S.STOPPED));
    expect(coordinator.lme.get(`${key.topicId}:0`)).toBe(3);
    leader1.close();

    // The first leader's markers are in the log; its STOPPED write was lost with it, and a new
    // leader takes over at the next epoch and redoes STOPPING.
    const markersAt = host.leaderEpoch('t', 0) ?? -1;
    await host.controllerWrite([{ type: 'bumpLeaderEpoch', topicId: key.topicId, partition: 0, leaderEpoch: markersAt + 1 }]);
    const second: State[] = [];
    const leader2 = machineOver(host, coordinator, rt, second);
    await leader2.resume(key, { state: S.STOPPING, previousState: S.MIRRORING, retryAttempt: 0, errorMessage: null }, S.STOPPED, markersAt + 1);
    await until(host.steps, () => second.includes(S.STOPPED));
    // Failback truncates the old source to the end of epoch 3, not to that of a destination epoch.
    expect(coordinator.writes.map((w) => w.lastMirrorEpoch)).toEqual([3, 3]);
    expect(coordinator.lme.get(`${key.topicId}:0`)).toBe(3);
    leader2.close();
    await host.close();
  });
});

describe('a stop after a start that failed before mirroring, with client writes in between', () => {
  it('keeps the last mirrored epoch of the earlier stop', async () => {
    const host = newHost();
    const key = await mirroredTopic(host, [3, 3]);
    const coordinator = coordinatorDouble(() => -1);
    const rt = runtimeDouble({ lme: -1 });
    await host.controllerWrite([{ type: 'mirrorTopicState', topicId: key.topicId, mirrorName: 'm1', desiredState: S.STOPPED }]);
    const seen: State[] = [];
    const machine = machineOver(host, coordinator, rt, seen);
    await machine.resume(key, { state: S.MIRRORING, previousState: S.LOG_TRUNCATION, retryAttempt: 0, errorMessage: null }, S.STOPPED, 0);
    await until(host.steps, () => seen.includes(S.STOPPED));
    expect(coordinator.lme.get(`${key.topicId}:0`)).toBe(3);
    // Writable: a client writes at the destination epoch. A start fails before its truncation
    // (the source is gone), and the operator stops again.
    const epoch = host.leaderEpoch('t', 0) ?? 0;
    expect((await host.produce('t', 0, buildRecordBatch({ records: [{ value: Buffer.from('client') }] }))).errorCode).toBe(0);
    expect(host.log('t', 0).logEndOffset).toBeGreaterThan(2);
    expect(epoch).toBeGreaterThan(3);
    seen.length = 0;
    await machine.resume(key, { state: S.FAILED, previousState: S.LOG_TRUNCATION, retryAttempt: -1, errorMessage: 'The source topic is deleted.' }, S.STOPPED, epoch);
    await until(host.steps, () => seen.includes(S.STOPPED));
    expect(coordinator.lme.get(`${key.topicId}:0`)).toBe(3);
    machine.close();
    await host.close();
  });

  it('forgets a recorded last mirrored epoch once mirroring starts again', async () => {
    const host = newHost();
    const key = await mirroredTopic(host, [3, 3]);
    const coordinator = coordinatorDouble(() => -1);
    coordinator.lme.set(`${key.topicId}:0`, 3);
    const seen: State[] = [];
    const machine = machineOver(host, coordinator, runtimeDouble({ lme: -1 }), seen);
    await machine.resume(key, { state: S.STOPPED, previousState: S.STOPPING, retryAttempt: 0, errorMessage: null }, S.MIRRORING, 0);
    await until(host.steps, () => seen.includes(S.MIRRORING));
    expect(coordinator.lme.get(`${key.topicId}:0`)).toBe(-1);
    machine.close();
    await host.close();
  });
});

describe('LOG_TRUNCATION with a replica that holds the cut records', () => {
  it('waits for it on the retry too, instead of finding the log cut and mirroring', async () => {
    const host = newHost();
    const key = await mirroredTopic(host, [1, 1, 1, 2, 2]);
    const coordinator = coordinatorDouble(() => -1);
    // The source's last mirrored epoch of this partition (a failback): the log is cut to offset 3.
    const rt = runtimeDouble({ lme: 1 });
    host.progress = { replicas: [1, 2], isr: [1, 2], minInsyncReplicas: 1, followerLogEnds: new Map([[2, 5]]), supportUncleanLeaderElection: true };
    const seen: State[] = [];
    const machine = machineOver(host, coordinator, rt, seen);
    await machine.resume(key, null, S.MIRRORING, 0);
    await until(host.steps, () => host.log('t', 0).logEndOffset === 3 && host.steps.pending > 0);
    // Replica 2 goes down before it follows the cut: it still ends at 5.
    host.progress = { ...host.progress, isr: [1] };
    await host.steps.advance(61_000);
    expect(seen).toContain(S.FAILED);
    // The retries find the log already cut; replica 2 is still down holding offsets 3 and 4.
    for (let i = 0; i < 4; i++) await host.steps.advance(61_000);
    expect(seen).not.toContain(S.MIRRORING);
    // It comes back and truncates through its fetches: mirroring starts.
    host.progress = { ...host.progress, isr: [1, 2], followerLogEnds: new Map([[2, 3]]) };
    await host.steps.advance(61_000);
    await until(host.steps, () => seen.at(-1) === S.MIRRORING);
    machine.close();
    await host.close();
  });
});

describe('state-write fencing', () => {
  it('a write carries the epoch given, not the image epoch the node has moved to', async () => {
    const host = newHost();
    const key = await mirroredTopic(host, []);
    const sent: MirrorStateEntry[][] = [];
    const coordinator = {
      partitionFor: () => 0,
      writeFenced: async (_m: string, list: readonly MirrorStateEntry[]) => void sent.push([...list]),
      runtime: { serves: () => true, partitions: 1 },
    } as unknown as MirrorCoordinator;
    const client = new MirrorStateClient(host, coordinator);
    // Led under epoch 0; the image here has since moved to 4 (another node leads now).
    await host.controllerWrite([{ type: 'bumpLeaderEpoch', topicId: key.topicId, partition: 0, leaderEpoch: 4 }]);
    await client.writeState(key, { state: S.MIRRORING, previousState: S.LOG_TRUNCATION, retryAttempt: 0, errorMessage: null }, 0);
    expect(sent[0]?.[0]?.leaderEpoch).toBe(0);
    client.close();
    await host.close();
  });
});

describe('the mirror-level refresh', () => {
  it('asks the source only from the node that owns the mirror', async () => {
    const host = newHost();
    await host.controllerWrite([{ type: 'mirrorConfig', mirrorName: 'm1', name: 'mirror.topics.include', value: '.*' }]);
    const asked: string[] = [];
    const client = new Proxy(
      {},
      {
        get: (_t, prop) => {
          if (prop === 'then') return undefined;
          return async () => {
            asked.push(String(prop));
            if (prop === 'describeCluster') return { errorCode: 0, clusterId: 'source' };
            throw new Error(`${String(prop)}: no answer in this test`);
          };
        },
      },
    ) as MirrorRuntime['client'];
    const rt = { ...runtimeDouble({ lme: -1 }), client };
    let owner = false;
    const sync = new MirrorSourceSync({
      host,
      machine: machineOver(host, coordinatorDouble(() => -1), rt, []),
      log: () => undefined,
      warn: () => undefined,
      runtimes: () => [rt],
      trackedKeys: () => [],
      isClosed: () => false,
      ownsMirror: () => owner,
    });
    sync.topicDiscovery = { start: async () => ({ errorCode: 0, errorMessage: null, topics: [] }), stop: async () => ({ errorCode: 0, errorMessage: null, topics: [] }) };
    await sync.refreshSources();
    // Not the owner: only the source cluster id check, for the partitions this node leads.
    expect(asked).toEqual(['describeCluster']);
    owner = true;
    asked.length = 0;
    await sync.refreshSources();
    expect(asked.filter((a) => a !== 'describeCluster').length).toBeGreaterThan(0);
    sync.close();
    await host.close();
  });
});
