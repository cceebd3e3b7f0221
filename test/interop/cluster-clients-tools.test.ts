/**
 * Apache Kafka 4.1.2's kafka-reassign-partitions and kafka-leader-election against a three-node
 * Fjord cluster on etcd: a plan generated for a topic is executed with a replication throttle and
 * verified (which clears the throttles), the replicas end up where the plan put them with every
 * record, and a plan that only reorders replicas leaves the leader in place until a PREFERRED
 * election moves it to the new first replica. `--cancel` reverts a reassignment in progress to
 * the original replicas, and the replica it was adding deletes its directory.
 */
import { readdirSync } from 'node:fs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import kafkajs from 'kafkajs';
import { javaTool, mustSucceed } from './lib/java.js';
import { run, tail } from './lib/run.js';
import { eventually, startCluster, type RunningCluster } from '../helpers/cluster.js';

const { Kafka, logLevel, ConfigResourceTypes } = kafkajs;
const TOPICS = 'org.apache.kafka.tools.TopicCommand';
const REASSIGN = 'org.apache.kafka.tools.reassign.ReassignPartitionsCommand';
const ELECTION = 'org.apache.kafka.tools.LeaderElectionCommand';
const TOPIC = 'moved';
const RECORDS = 200;

let cluster: RunningCluster;
let dir: string;
const bootstrap = (): string => cluster.nodes.filter((n) => n.running).map((n) => n.bootstrap).join(',');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fjord-reassign-'));
  // A session long enough for a node held with SIGSTOP across two tool runs to stay registered.
  cluster = await startCluster({ nodes: 3, overrides: { 'auto.leader.rebalance.enable': false, 'broker.session.timeout.ms': 20_000 } });
}, 180_000);

afterAll(async () => {
  await cluster?.destroy();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

interface Assignment {
  readonly topic: string;
  readonly partition: number;
  readonly replicas: number[];
}

interface PartitionLine {
  readonly partition: number;
  readonly leader: number;
  readonly replicas: number[];
  readonly isr: number[];
}

const tool = async (main: string, args: string[], servers = bootstrap()): Promise<string> => {
  const r = mustSucceed(`${main} ${args.join(' ')}`, await javaTool(main, ['--bootstrap-server', servers, ...args]));
  return r.stdout + r.stderr;
};

async function describeTopic(topic = TOPIC): Promise<PartitionLine[]> {
  return (await tool(TOPICS, ['--describe', '--topic', topic]))
    .split('\n')
    .filter((l) => /\tPartition: \d+/.test(l))
    .map((l) => ({
      partition: Number(/Partition: (\d+)/.exec(l)![1]),
      leader: Number(/Leader: (-?\d+)/.exec(l)?.[1] ?? -1),
      replicas: /Replicas: ([\d,]+)/.exec(l)![1]!.split(',').map(Number),
      isr: (/Isr: ([\d,]*)/.exec(l)?.[1] ?? '').split(',').filter((x) => x !== '').map(Number),
    }))
    .sort((a, b) => a.partition - b.partition);
}

/** The JSON line following `heading` in the tool's output, as a list of assignments. */
function planAfter(out: string, heading: string): Assignment[] {
  const lines = out.split('\n');
  const at = lines.findIndex((l) => l.startsWith(heading));
  const json = lines.slice(at + 1).find((l) => l.startsWith('{'));
  if (at < 0 || json === undefined) throw new Error(`no "${heading}" plan in:\n${out}`);
  return (JSON.parse(json) as { partitions: Assignment[] }).partitions
    .map((p) => ({ topic: p.topic, partition: p.partition, replicas: p.replicas }))
    .sort((a, b) => a.partition - b.partition);
}

function writePlan(name: string, partitions: readonly Assignment[]): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify({ version: 1, partitions }));
  return file;
}

/** Runs --verify until every partition of the plan reports completed; returns that output. */
async function verified(planFile: string, partitions: number): Promise<string> {
  return eventually('the reassignment to complete', async () => {
    const out = await tool(REASSIGN, ['--verify', '--reassignment-json-file', planFile]);
    return (out.match(/Reassignment of partition moved-\d+ is completed\./g) ?? []).length === partitions ? out : null;
  }, 60_000);
}

async function kcat(args: string[], input?: string): Promise<string> {
  const r = await run('kcat', ['-b', bootstrap(), '-X', 'socket.connection.setup.timeout.ms=3000', ...args], { timeoutMs: 60_000, ...(input === undefined ? {} : { input }) });
  if (r.code !== 0) throw new Error(`kcat ${args.join(' ')} failed (exit ${r.code}):\n${tail(r.stderr, 15)}`);
  return r.stdout;
}

const THROTTLE_KEYS = ['leader.replication.throttled.replicas', 'follower.replication.throttled.replicas'];

/** The topic's throttled-replica lists as DescribeConfigs reports them. */
async function throttledReplicas(): Promise<Record<string, string>> {
  const admin = new Kafka({ clientId: 'reassign-configs', brokers: bootstrap().split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const r = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: TOPIC, configNames: THROTTLE_KEYS }], includeSynonyms: false });
    return Object.fromEntries(r.resources[0]!.configEntries.map((e) => [e.configName, e.configValue]));
  } finally {
    await admin.disconnect();
  }
}

const values = (p: number): string[] => Array.from({ length: RECORDS }, (_, i) => `p${p}-${i}`);

describe('kafka-reassign-partitions and kafka-leader-election on a three-node Fjord cluster', () => {
  it('--generate proposes a plan over the given brokers; --execute --throttle moves the replicas off node 1; --verify completes and clears the throttles; the moved replicas hold every record', async () => {
    await tool(TOPICS, ['--create', '--topic', TOPIC, '--replica-assignment', '1:2,1:3']);
    for (const p of [0, 1]) await kcat(['-P', '-t', TOPIC, '-p', String(p), '-X', 'acks=all'], values(p).join('\n') + '\n');

    const topicsFile = join(dir, 'topics.json');
    writeFileSync(topicsFile, JSON.stringify({ version: 1, topics: [{ topic: TOPIC }] }));
    const generated = await tool(REASSIGN, ['--generate', '--topics-to-move-json-file', topicsFile, '--broker-list', '2,3']);
    expect(planAfter(generated, 'Current partition replica assignment')).toEqual([
      { topic: TOPIC, partition: 0, replicas: [1, 2] },
      { topic: TOPIC, partition: 1, replicas: [1, 3] },
    ]);
    const proposed = planAfter(generated, 'Proposed partition reassignment configuration');
    expect(proposed.map((p) => [...p.replicas].sort())).toEqual([[2, 3], [2, 3]]);

    const planFile = writePlan('plan.json', proposed);
    const executed = await tool(REASSIGN, ['--execute', '--reassignment-json-file', planFile, '--throttle', '50000000']);
    expect(executed).toContain('The inter-broker throttle limit was set to 50000000 B/s');
    expect(executed).toMatch(/Successfully started partition reassignments for moved-0,moved-1/);
    // The tool throttles the current replicas as leaders and the moving ones as followers.
    const throttles = await throttledReplicas();
    expect(throttles['leader.replication.throttled.replicas']?.split(',').sort()).toEqual(['0:1', '0:2', '1:1', '1:3']);
    expect(throttles['follower.replication.throttled.replicas']).toMatch(/^\d+:\d+(,\d+:\d+)*$/);

    const done = await verified(planFile, 2);
    expect(done).toContain('Clearing broker-level throttles on brokers 1,2,3');
    expect(done).toContain(`Clearing topic-level throttles on topic ${TOPIC}`);
    expect(await throttledReplicas()).toEqual({ 'leader.replication.throttled.replicas': '', 'follower.replication.throttled.replicas': '' });
    const after = await eventually('both new replicas in the ISR', async () => {
      const d = await describeTopic();
      return d.every((p) => p.isr.length === 2) ? d : null;
    });
    for (const p of after) {
      expect(p.replicas).toEqual(proposed[p.partition]!.replicas);
      expect([...p.isr].sort()).toEqual([2, 3]);
      expect([2, 3]).toContain(p.leader);
    }

    // With node 1 (the only replica both partitions had in common before) gone, the records are
    // read from the replicas the reassignment made.
    await cluster.node(1).stop();
    try {
      for (const p of [0, 1]) {
        const out = await kcat(['-C', '-t', TOPIC, '-p', String(p), '-o', 'beginning', '-e', '-f', '%s\n']);
        expect(out.trim().split('\n')).toEqual(values(p));
      }
    } finally {
      await cluster.node(1).start();
    }
  });

  it('a throttled-replica list that is neither * nor partition:broker pairs is refused with INVALID_CONFIG', async () => {
    const admin = new Kafka({ clientId: 'reassign-configs', brokers: bootstrap().split(','), logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
    await admin.connect();
    try {
      const bad = admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: TOPIC, configEntries: [{ name: 'leader.replication.throttled.replicas', value: '0:1,broker-2' }] }] });
      await expect(bad).rejects.toMatchObject({ type: 'INVALID_CONFIG' });
      await admin.alterConfigs({ validateOnly: true, resources: [{ type: ConfigResourceTypes.TOPIC, name: TOPIC, configEntries: [{ name: 'leader.replication.throttled.replicas', value: '*' }] }] });
    } finally {
      await admin.disconnect();
    }
  });

  it('a plan that only reorders the replicas keeps the leader; kafka-leader-election --election-type PREFERRED then elects the new first replica', async () => {
    const before = await describeTopic();
    // The same two replicas, the one that does not lead first.
    const reversed = before.map((p) => ({ topic: TOPIC, partition: p.partition, replicas: [...p.replicas.filter((r) => r !== p.leader), p.leader] }));
    const planFile = writePlan('reorder.json', reversed);
    expect(await tool(REASSIGN, ['--execute', '--reassignment-json-file', planFile])).toMatch(/Successfully started partition reassignments for moved-0,moved-1/);
    await verified(planFile, 2);
    const reordered = await describeTopic();
    for (const p of reordered) {
      expect(p.replicas).toEqual(reversed[p.partition]!.replicas);
      // Kafka moves leadership only when the leader leaves the replica set.
      expect(p.leader).toBe(before[p.partition]!.leader);
    }

    const electFile = join(dir, 'elect.json');
    writeFileSync(electFile, JSON.stringify({ partitions: before.map((p) => ({ topic: TOPIC, partition: p.partition })) }));
    const elected = await tool(ELECTION, ['--election-type', 'PREFERRED', '--path-to-json-file', electFile]);
    expect(elected).toMatch(/Successfully completed leader election \(PREFERRED\) for partitions (moved-0, moved-1|moved-1, moved-0)/);
    for (const p of await describeTopic()) expect(p.leader).toBe(reversed[p.partition]!.replicas[0]);
    // Run again: nothing left to elect.
    expect(await tool(ELECTION, ['--election-type', 'PREFERRED', '--path-to-json-file', electFile])).toMatch(/Valid replica already elected for partitions/);
  });

  it('--cancel reverts a reassignment in progress to the original replicas; the replica being added deletes its directory; --list then shows none', async () => {
    const topic = 'cancel-me';
    const admin = new Kafka({ clientId: 'reassign-cancel', brokers: bootstrap().split(','), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const controller = (await admin.describeCluster()).controller!;
    await admin.disconnect();
    // The replica to add (held with SIGSTOP, well within its session, so it cannot catch up and
    // the reassignment stays in progress) is neither the controller the tool talks to nor in
    // the tool's bootstrap list; the original replicas are the other two nodes.
    const [kept, adding] = [1, 2, 3].filter((n) => n !== controller) as [number, number];
    const others = [kept, controller].map((n) => cluster.node(n).bootstrap).join(',');
    await tool(TOPICS, ['--create', '--topic', topic, '--replica-assignment', `${kept}:${controller}`]);
    await kcat(['-P', '-t', topic, '-p', '0', '-X', 'acks=all'], 'x\ny\nz\n');
    await eventually('both replicas in the ISR', async () => ((await describeTopic(topic))[0]?.isr.length === 2 ? true : null));
    const planFile = writePlan('cancel.json', [{ topic, partition: 0, replicas: [kept, adding] }]);
    cluster.node(adding).pause();
    let listed: string;
    let cancelled: string;
    try {
      expect(await tool(REASSIGN, ['--execute', '--reassignment-json-file', planFile], others)).toMatch(/Successfully started partition reassignment for cancel-me-0/);
      listed = await tool(REASSIGN, ['--list'], others);
      // --preserve-throttles: clearing broker-level throttles would ask the held node too.
      cancelled = await tool(REASSIGN, ['--cancel', '--preserve-throttles', '--reassignment-json-file', planFile], others);
    } finally {
      cluster.node(adding).resume();
    }
    expect(listed).toContain(`cancel-me-0: replicas: ${kept},${adding},${controller}. adding: ${adding}. removing: ${controller}.`);
    expect(cancelled).toMatch(/Successfully cancelled partition reassignment.*cancel-me-0/s);
    expect(await tool(REASSIGN, ['--list'])).toContain('No partition reassignments found.');
    const [p] = await describeTopic(topic);
    expect(p).toMatchObject({ leader: kept, replicas: [kept, controller] });
    expect([...p!.isr].sort()).toEqual([kept, controller].sort());
    await eventually('the node that was being added deleting its replica', async () => !readdirSync(cluster.node(adding).dataDir!).some((n) => n.startsWith(`${topic}-`)), 30_000);
    expect(readdirSync(cluster.node(controller).dataDir!)).toContain(`${topic}-0`);
    const out = await kcat(['-C', '-t', topic, '-p', '0', '-o', 'beginning', '-e', '-f', '%s\n']);
    expect(out.trim().split('\n')).toEqual(['x', 'y', 'z']);
  });
});
