/**
 * Apache Kafka's own command-line tools against a three-node Fjord cluster on etcd:
 * kafka-topics --describe shows each partition's leader, replicas and ISR as the cluster has
 * them, kafka-metadata-quorum describe --status reports the active controller as the leader and
 * the nodes as voters, and kafka-leader-election runs preferred elections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { javaTool, mustSucceed } from './lib/java.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';

const TOPICS = 'org.apache.kafka.tools.TopicCommand';
const QUORUM = 'org.apache.kafka.tools.MetadataQuorumCommand';
const ELECTION = 'org.apache.kafka.tools.LeaderElectionCommand';

let cluster: RunningCluster;
const bootstrap = (): string => cluster.bootstrap.join(',');

beforeAll(async () => {
  cluster = await startCluster({ nodes: 3, overrides: { 'auto.leader.rebalance.enable': false } });
}, 240_000);

afterAll(async () => {
  await cluster?.destroy();
}, 60_000);

/** `\tPartition: 0\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,3,1...` → its fields. */
function partitionLines(out: string): { partition: number; leader: number; replicas: number[]; isr: number[] }[] {
  return out
    .split('\n')
    .filter((l) => /\tPartition: \d+/.test(l))
    .map((l) => ({
      partition: Number(/Partition: (\d+)/.exec(l)![1]),
      leader: Number(/Leader: (-?\d+|none)/.exec(l)![1]!.replace('none', '-1')),
      replicas: /Replicas: ([\d,]+)/.exec(l)![1]!.split(',').map(Number),
      isr: (/Isr: ([\d,]*)/.exec(l)?.[1] ?? '').split(',').filter((x) => x !== '').map(Number),
    }));
}

describe('Apache Kafka tools against a three-node Fjord cluster', () => {
  it('kafka-topics --create/--describe: RF 3 placed on three distinct nodes, leader first, all in ISR', async () => {
    mustSucceed('kafka-topics --create', await javaTool(TOPICS, ['--bootstrap-server', bootstrap(), '--create', '--topic', 'tools-rf3', '--partitions', '3', '--replication-factor', '3']));
    const out = mustSucceed('kafka-topics --describe', await javaTool(TOPICS, ['--bootstrap-server', bootstrap(), '--describe', '--topic', 'tools-rf3'])).stdout;
    expect(out).toMatch(/PartitionCount: 3\s+ReplicationFactor: 3/);
    const parts = partitionLines(out);
    expect(parts).toHaveLength(3);
    for (const p of parts) {
      expect([...p.replicas].sort()).toEqual([1, 2, 3]);
      expect(p.leader).toBe(p.replicas[0]);
      expect([...p.isr].sort()).toEqual([1, 2, 3]);
    }
    const tooMany = await javaTool(TOPICS, ['--bootstrap-server', bootstrap(), '--create', '--topic', 'tools-rf4', '--partitions', '1', '--replication-factor', '4']);
    expect(tooMany.code).not.toBe(0);
    expect(tooMany.stdout + tooMany.stderr).toContain('The target replication factor of 4 cannot be reached because only 3 broker(s) are registered.');
  });

  it('kafka-metadata-quorum describe --status: the active controller leads, the nodes are voters', async () => {
    const out = mustSucceed('kafka-metadata-quorum', await javaTool(QUORUM, ['--bootstrap-server', bootstrap(), 'describe', '--status'])).stdout;
    const leader = Number(/LeaderId:\s+(\d+)/.exec(out)?.[1]);
    expect([1, 2, 3]).toContain(leader);
    expect(out).toMatch(/ClusterId:\s+\S{22}/);
    expect(out).toMatch(/HighWatermark:\s+\d+/);
    const voters = /CurrentVoters:\s+(.*)/.exec(out)?.[1] ?? '';
    for (const id of [1, 2, 3]) expect(voters).toContain(`"id": ${id}`);
  });

  it('kafka-leader-election --election-type PREFERRED: nothing to do when preferred leaders lead; the preferred leader is unavailable while it is down; elected again once back in the ISR', async () => {
    const noop = mustSucceed('kafka-leader-election', await javaTool(ELECTION, ['--bootstrap-server', bootstrap(), '--election-type', 'PREFERRED', '--topic', 'tools-rf3', '--partition', '0']));
    expect(noop.stdout + noop.stderr).toMatch(/Valid replica already elected for partitions tools-rf3-0/);
    // The preferred leader of partition 0 shuts down: leadership moves, and it leaves the ISR.
    const before = partitionLines(mustSucceed('describe', await javaTool(TOPICS, ['--bootstrap-server', bootstrap(), '--describe', '--topic', 'tools-rf3'])).stdout)[0]!;
    const preferred = before.replicas[0]!;
    await cluster.node(preferred).stop();
    const others = cluster.bootstrap.filter((_, i) => i + 1 !== preferred).join(',');
    const describe0 = async () => partitionLines((await javaTool(TOPICS, ['--bootstrap-server', others, '--describe', '--topic', 'tools-rf3'])).stdout)[0];
    await eventually('partition 0 led elsewhere, without its preferred leader in the ISR', async () => {
      const p = await describe0();
      return p && p.leader !== preferred && p.leader > 0 && !p.isr.includes(preferred) ? p : null;
    });
    const unavailable = await javaTool(ELECTION, ['--bootstrap-server', others, '--election-type', 'PREFERRED', '--topic', 'tools-rf3', '--partition', '0']);
    expect(unavailable.stdout + unavailable.stderr).toMatch(/tools-rf3-0.*PreferredLeaderNotAvailableException/s);
    // Back, it catches up as a follower and rejoins the ISR; then the election moves leadership back.
    await cluster.node(preferred).start();
    await eventually('the preferred leader back in the ISR', async () => {
      const p = await describe0();
      return p && p.isr.includes(preferred) ? p : null;
    }, 60_000);
    const elected = mustSucceed('kafka-leader-election', await javaTool(ELECTION, ['--bootstrap-server', bootstrap(), '--election-type', 'PREFERRED', '--topic', 'tools-rf3', '--partition', '0']));
    expect(elected.stdout + elected.stderr).toMatch(/Successfully completed leader election \(PREFERRED\) for partitions tools-rf3-0/);
    expect((await describe0())?.leader).toBe(preferred);
  });

});
