/** `fjord cluster-mirrors` run in-process against a node, with its output lines collected. */
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { runClusterMirrorsCli } from '../../src/cli/cluster-mirrors.js';
import { KafkaClient } from '../../src/client/kafka-client.js';

export interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

export async function clusterMirrors(bootstrap: string, ...argv: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runClusterMirrorsCli(['--bootstrap-server', bootstrap, ...argv], { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The state `--describe --json` shows for each partition of `topic` in `mirror`, in its order. */
export async function mirrorStates(bootstrap: string, mirror: string, topic: string): Promise<string[]> {
  const r = await clusterMirrors(bootstrap, '--describe', '--mirror', mirror, '--json');
  if (r.code !== 0) throw new Error(r.err);
  return (JSON.parse(r.out) as { topic: string; state: string }[]).filter((p) => p.topic === topic).map((p) => p.state);
}

/** The leader epoch the node at `bootstrap` reports for each partition of `topic`. */
export async function leaderEpochs(bootstrap: string, topic: string): Promise<number[]> {
  const client = new KafkaClient({ bootstrapServers: [bootstrap], clientId: 'mirror-test-epochs' });
  try {
    return (await client.metadata([topic])).topics[0]!.partitions.map((p) => p.leaderEpoch);
  } finally {
    client.close();
  }
}

/** Records written to `__mirror_state` on a node so far (the sum of its partitions' end offsets). */
export async function mirrorStateRecords(admin: Admin): Promise<number> {
  const offsets = await admin.fetchTopicOffsets('__mirror_state');
  return offsets.reduce((sum, p) => sum + Number(p.high), 0);
}

/** Creates `topics` of `partitions` partitions on a source and writes one record to each partition (acks=all). */
export async function seedSourceTopics(bootstrap: string, clientId: string, topics: readonly string[], partitions: number): Promise<void> {
  const kafka = new Kafka({ clientId, brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const a = kafka.admin();
  await a.connect();
  await a.createTopics({ topics: topics.map((topic) => ({ topic, numPartitions: partitions })), waitForLeaders: true });
  await a.disconnect();
  const p = kafka.producer({ allowAutoTopicCreation: false });
  await p.connect();
  await p.sendBatch({ acks: -1, topicMessages: topics.map((topic) => ({ topic, messages: Array.from({ length: partitions }, (_, partition) => ({ partition, value: `${topic}-${partition}` })) })) });
  await p.disconnect();
}
