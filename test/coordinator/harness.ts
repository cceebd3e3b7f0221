import type { CancelTimer, Timers } from '../../src/common/time.js';
import type { CoordinatorHost, CoordinatorLog } from '../../src/coordinator/coordinator-host.js';
import type { ConsumerHeartbeatRequest } from '../../src/coordinator/consumer-ops.js';

/** Timers on a hand-driven clock: `advance` fires what falls due, in deadline order. */
export class ManualTimers implements Timers {
  now = 1_700_000_000_000;
  private seq = 0;
  private readonly queue = new Map<number, { at: number; fn: () => void }>();

  schedule(delayMs: number, fn: () => void): CancelTimer {
    const id = this.seq++;
    this.queue.set(id, { at: this.now + Math.max(0, delayMs), fn });
    return () => {
      this.queue.delete(id);
    };
  }

  /** Moves time forward, firing due timers one by one and letting their write ops run. */
  async advance(ms: number): Promise<void> {
    const target = this.now + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.queue) if (e[1].at <= target && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.queue.delete(next[0]);
      this.now = Math.max(this.now, next[1].at);
      next[1].fn();
      await settle();
    }
    this.now = target;
    await settle();
  }

  pending(): number {
    return this.queue.size;
  }
}

/** Lets queued promise chains and I/O callbacks run. */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}

export interface TestHost extends CoordinatorHost {
  readonly manual: ManualTimers;
  readonly logs: Map<string, CoordinatorLog>;
  /** Removes a topic from the metadata and tells the metadata listeners. */
  deleteTopic(name: string): void;
}

export function testHost(
  openLog: (topic: string, partition: number) => Promise<CoordinatorLog>,
  config: Record<string, string> = {},
  existingTopics: Record<string, number> = {},
  dataTopics: Record<string, number> = {},
): TestHost {
  const ids = new Map<string, string>();
  const names = new Map<string, string>();
  let n = 0;
  for (const name of Object.keys(dataTopics)) {
    const id = `00000000-0000-0000-0000-${String(++n).padStart(12, '0')}`;
    ids.set(name, id);
    names.set(id, name);
  }
  const manual = new ManualTimers();
  const logs = new Map<string, CoordinatorLog>();
  const topics = new Map(Object.entries({ ...existingTopics, ...dataTopics }));
  const listeners = new Set<() => void>();
  return {
    nodeId: 1,
    host: '127.0.0.1',
    port: 9092,
    clock: { now: () => manual.now },
    timers: manual,
    manual,
    logs,
    config: (k) => config[k],
    async openInternalPartition(topic, partition, partitions) {
      topics.set(topic, partitions);
      const key = `${topic}-${partition}`;
      let log = logs.get(key);
      if (!log) {
        log = await openLog(topic, partition);
        logs.set(key, log);
      }
      return log;
    },
    topicIdByName: (name) => ids.get(name),
    topicNameById: (id) => names.get(id),
    topicNames: () => [...topics.keys()],
    partitionCount: (t) => topics.get(t),
    onMetadataChange: (cb) => {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    deleteTopic(name) {
      topics.delete(name);
      for (const cb of listeners) cb();
    },
  };
}

/**
 * A ConsumerGroupHeartbeat v1 of a member subscribed to `orders`: a join (epoch 0) sends every
 * field, a later heartbeat only what changed; `over` sets the rest.
 */
export function consumerHeartbeat(groupId: string, memberId: string, memberEpoch: number, over: Partial<ConsumerHeartbeatRequest> = {}): ConsumerHeartbeatRequest {
  return {
    groupId,
    memberId,
    memberEpoch,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: memberEpoch === 0 ? 30000 : -1,
    subscribedTopicNames: memberEpoch === 0 ? ['orders'] : null,
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: memberEpoch === 0 ? [] : null,
    clientId: 'c',
    clientHost: '/127.0.0.1',
    version: 1,
    ...over,
  };
}
