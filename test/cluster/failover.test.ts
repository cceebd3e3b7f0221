/**
 * Node loss on a three-node cluster (real etcd, real `fjord start` processes, broker session
 * timeout 3 s): the partition leader killed with SIGKILL loses its leaderships to ISR members;
 * the active controller killed is replaced and admin writes go on; a node stopped with SIGSTOP
 * past its lease is fenced and rejoins on SIGCONT; a SIGTERM moves leaderships away before the
 * node exits; etcd restarted mid-run is survived.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { Apis } from '../../src/client/apis.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import type { MetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';

const SESSION_MS = 3000;
let cluster: RunningCluster;

async function withClient<T>(nodeId: number, fn: (c: KafkaClient) => Promise<T>): Promise<T> {
  const c = new KafkaClient({ bootstrapServers: [cluster.node(nodeId).bootstrap], clientId: `failover-${nodeId}` });
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}

const metadataOn = (nodeId: number, topics: string[] | null): Promise<MetadataResponse> =>
  withClient(nodeId, (c) =>
    c.send(Apis.Metadata, { topics: topics === null ? null : topics.map((name) => ({ name, topicId: '00000000-0000-0000-0000-000000000000' })), allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }),
  );

const createTopic = (nodeId: number, name: string, partitions: number, rf: number): Promise<number> =>
  withClient(nodeId, async (c) => {
    const r = await c.send(Apis.CreateTopics, { topics: [{ name, numPartitions: partitions, replicationFactor: rf, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false });
    return r.topics[0]!.errorCode;
  });

const brokersSeenBy = async (nodeId: number): Promise<number[]> => (await metadataOn(nodeId, [])).brokers.map((b) => b.nodeId).sort();

beforeAll(async () => {
  // Preferred leaders are restored every second (auto.leader.rebalance.enable is on by default).
  cluster = await startCluster({ nodes: 3, overrides: { 'leader.imbalance.check.interval.seconds': 1 } });
}, 240_000);

afterAll(async () => {
  await cluster?.destroy();
}, 60_000);

describe('failover on a three-node cluster', () => {
  it('SIGKILL of a partition leader moves its leaderships to ISR members within the session timeout', async () => {
    expect(await createTopic(1, 'fo', 6, 3)).toBe(ErrorCode.NONE);
    const before = await eventually('fo on node 1', async () => {
      const m = await metadataOn(1, ['fo']);
      return m.topics[0]?.errorCode === ErrorCode.NONE ? m : null;
    });
    const victim = [1, 2, 3].find((id) => id !== before.controllerId)!;
    const led = before.topics[0]!.partitions.filter((p) => p.leaderId === victim);
    expect(led.length).toBeGreaterThan(0);
    const observer = [1, 2, 3].find((id) => id !== victim)!;
    const killedAt = Date.now();
    await cluster.node(victim).kill();
    const after = await eventually('leaders to move off the killed node', async () => {
      const m = await metadataOn(observer, ['fo']);
      return m.topics[0]!.partitions.every((p) => p.leaderId !== victim && !p.isrNodes.includes(victim)) ? m : null;
    }, SESSION_MS * 4);
    // Loss is noticed when the lease expires (one session timeout), plus the controller's write.
    expect(Date.now() - killedAt).toBeLessThan(SESSION_MS * 4);
    for (const p of after.topics[0]!.partitions) {
      const old = before.topics[0]!.partitions.find((x) => x.partitionIndex === p.partitionIndex)!;
      expect(p.errorCode).toBe(ErrorCode.NONE);
      expect(p.offlineReplicas).toEqual([victim]);
      if (old.leaderId === victim) {
        // The first surviving ISR member in replica order, at the next leader epoch.
        expect(p.leaderId).toBe(old.replicaNodes.find((r) => r !== victim && old.isrNodes.includes(r)));
        expect(p.leaderEpoch).toBe(old.leaderEpoch + 1);
      } else {
        expect(p.leaderId).toBe(old.leaderId);
      }
    }
    expect(await brokersSeenBy(observer)).toEqual([1, 2, 3].filter((id) => id !== victim));
    await cluster.node(victim).start();
    await eventually('the restarted node to be listed again', async () => ((await brokersSeenBy(observer)).length === 3 ? true : null));
  });

  it('SIGKILL of the active controller elects another, and admin writes keep working', async () => {
    const { controllerId: old } = await metadataOn(1, []);
    expect(old).toBeGreaterThan(0);
    const survivor = [1, 2, 3].find((id) => id !== old)!;
    await cluster.node(old).kill();
    const next = await eventually('a new active controller', async () => {
      const m = await metadataOn(survivor, []);
      return m.controllerId > 0 && m.controllerId !== old ? m.controllerId : null;
    }, SESSION_MS * 4);
    expect([1, 2, 3].filter((id) => id !== old)).toContain(next);
    expect(await createTopic(survivor, 'after-controller-loss', 2, 2)).toBe(ErrorCode.NONE);
    // The dead controller's partitions were taken over by the new one.
    const m = await eventually('leaders off the old controller', async () => {
      const md = await metadataOn(survivor, ['fo']);
      return md.topics[0]!.partitions.every((p) => p.leaderId !== old) ? md : null;
    }, SESSION_MS * 4);
    expect(m.topics[0]!.partitions.every((p) => p.leaderId >= 1)).toBe(true);
    await cluster.node(old).start();
    await eventually('the old controller to rejoin as a broker', async () => ((await brokersSeenBy(old)).length === 3 ? true : null));
  });

  it('SIGSTOP past the lease fences a node (its registration disappears); SIGCONT rejoins it', async () => {
    const { controllerId } = await metadataOn(1, []);
    const paused = [1, 2, 3].find((id) => id !== controllerId)!;
    const observer = controllerId;
    const epochBefore = cluster.node(paused).logs().match(/"broker registered".*?"brokerEpoch":(\d+)/g)!.length;
    cluster.node(paused).pause();
    try {
      await eventually('the stopped node to drop out', async () => (!(await brokersSeenBy(observer)).includes(paused) ? true : null), SESSION_MS * 4);
    } finally {
      cluster.node(paused).resume();
    }
    await eventually('the node to report itself fenced and register again', async () => {
      const logs = cluster.node(paused).logs();
      return logs.includes('"msg":"broker fenced"') && (logs.match(/"broker registered"/g) ?? []).length > epochBefore ? true : null;
    });
    await eventually('the node to be listed again', async () => ((await brokersSeenBy(observer)).includes(paused) ? true : null));
    // Metadata it serves is current again: a topic made elsewhere shows up there.
    expect(await createTopic(observer, 'after-fence', 1, 3)).toBe(ErrorCode.NONE);
    await eventually('the rejoined node to see a new topic', async () => ((await metadataOn(paused, ['after-fence'])).topics[0]?.errorCode === ErrorCode.NONE ? true : null));
  });

  it('SIGTERM moves the node\'s leaderships away before it exits (controlled shutdown)', async () => {
    expect(await createTopic(2, 'cs', 6, 3)).toBe(ErrorCode.NONE);
    const md = await eventually('cs led by every node', async () => {
      const m = await metadataOn(2, ['cs']);
      return m.topics[0]?.errorCode === ErrorCode.NONE && m.brokers.length === 3 ? m : null;
    });
    const leaving = md.topics[0]!.partitions[0]!.leaderId;
    const observer = [1, 2, 3].find((id) => id !== leaving)!;
    await cluster.node(leaving).stop();
    // The node waited, while still serving, until it led nothing; without a controlled shutdown
    // its leaderships would move only after it exited (when its lease ends).
    expect(cluster.node(leaving).logs()).toMatch(/"msg":"controlled shutdown complete"[^\n]*\n(?:(?!"node started").)*"msg":"shutdown complete"/s);
    const now = await metadataOn(observer, ['cs']);
    for (const p of now.topics[0]!.partitions) {
      expect(p.leaderId).not.toBe(leaving);
      expect(p.leaderId).toBeGreaterThan(0);
    }
    await cluster.node(leaving).start();
  });

  it('auto.leader.rebalance.enable gives leadership back to the preferred replica once it is in the ISR', async () => {
    const created = await withClient(1, (c) =>
      c.send(Apis.CreateTopics, { topics: [{ name: 'rebalance', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [3, 1, 2] }], configs: [] }], timeoutMs: 10_000, validateOnly: false }),
    );
    expect(created.topics[0]!.errorCode).toBe(ErrorCode.NONE);
    await cluster.node(3).stop();
    const moved = await eventually('rebalance-0 led by 1', async () => {
      const p = (await metadataOn(1, ['rebalance'])).topics[0]?.partitions[0];
      return p && p.leaderId === 1 ? p : null;
    });
    await cluster.node(3).start();
    // Node 3 catches up as a follower and the leader takes it back into the ISR (AlterPartition);
    // only then may the controller's rebalance give it leadership back.
    const restored = await eventually('the preferred leader restored', async () => {
      const p = (await metadataOn(2, ['rebalance'])).topics[0]?.partitions[0];
      return p && p.leaderId === 3 ? p : null;
    }, 60_000);
    expect(restored.isrNodes).toContain(3);
    expect(restored.leaderEpoch).toBe(moved.leaderEpoch + 1);
  });

  it('etcd restarted mid-run: nodes reconnect and carry on', async () => {
    await cluster.etcd.restart();
    await eventually('a topic created after the etcd restart', async () => ((await createTopic(3, 'after-etcd-restart', 1, 3)) === ErrorCode.NONE ? true : null), 30_000);
    for (const id of [1, 2, 3]) {
      await eventually(`node ${id} to see the new topic and all brokers`, async () => {
        const m = await metadataOn(id, ['after-etcd-restart']);
        return m.topics[0]?.errorCode === ErrorCode.NONE && m.brokers.length === 3 ? true : null;
      }, 30_000);
    }
  });
});
