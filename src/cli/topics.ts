/**
 * `fjord topics`: kafka-topics.sh's flags and output (Kafka's `org.apache.kafka.tools.TopicCommand`),
 * so an operator's habits carry over: --create, --list, --describe, --delete, --alter
 * --partitions, over CreateTopics, Metadata, DescribeConfigs, DeleteTopics and CreatePartitions.
 */
import { Apis } from '../client/apis.js';
import type { KafkaClient } from '../client/kafka-client.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { check, Exit, parseCommand, parseConfigList, runAgainst, usageLine, UsageError, type CommandSpec, type OptionSpecs, type Out } from './cli-common.js';

const TOPICS = {
  command: 'topics',
  synopsis: `usage: fjord topics --bootstrap-server HOST:PORT ACTION [options] [--json]

actions (exactly one):
  --create --topic T [--partitions N] [--replication-factor N] [--config k=v]... [--if-not-exists]
  --list [--exclude-internal]
  --describe [--topic T] [--topics-with-overrides | --under-replicated-partitions] [--exclude-internal]
  --delete --topic T [--if-exists]
  --alter --topic T --partitions N [--if-exists]`,
  options: {
    'bootstrap-server': { type: 'string', default: '127.0.0.1:9092' },
    create: { type: 'boolean', default: false },
    list: { type: 'boolean', default: false },
    describe: { type: 'boolean', default: false },
    delete: { type: 'boolean', default: false },
    alter: { type: 'boolean', default: false },
    topic: { type: 'string' },
    partitions: { type: 'string' },
    'replication-factor': { type: 'string' },
    config: { type: 'string', multiple: true, default: [] },
    'if-exists': { type: 'boolean', default: false },
    'if-not-exists': { type: 'boolean', default: false },
    'exclude-internal': { type: 'boolean', default: false },
    'topics-with-overrides': { type: 'boolean', default: false },
    'under-replicated-partitions': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
  help: {
    'bootstrap-server': ['HOST:PORT', 'the node to ask'],
    create: 'create a topic',
    list: 'list the topic names',
    describe: 'describe topics: id, partitions, leaders, replicas, ISR and overridden configs',
    delete: 'delete a topic',
    alter: 'add partitions to a topic',
    topic: ['T', 'the topic to act on'],
    partitions: ['N', 'partition count (--create), or the new, larger count (--alter)'],
    'replication-factor': ['N', 'replicas per partition (--create)'],
    config: ['k=v', 'a topic config override (--create)'],
    'if-exists': 'with --delete, --alter or --describe: no error when the topic does not exist',
    'if-not-exists': 'with --create: no error when the topic exists',
    'exclude-internal': 'leave internal topics (__consumer_offsets, ...) out of --list and --describe',
    'topics-with-overrides': 'with --describe: only topics with config overrides, without partitions',
    'under-replicated-partitions': 'with --describe: only the partitions whose ISR is smaller than their replica set (nothing when all are in sync)',
    json: 'machine-readable output',
  },
} as const satisfies CommandSpec<OptionSpecs>;

/** ConfigSource DEFAULT_CONFIG (DescribeConfigs): values nobody set, left out as TopicCommand does. */
const DEFAULT_CONFIG = 5;
/** Uuid.ZERO_UUID as Kafka prints it: TopicCommand leaves the TopicId column out for it. */
const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

export interface PartitionDescription {
  partition: number;
  leader: number | null;
  replicas: number[];
  isr: number[];
}

export interface TopicDescription {
  topic: string;
  /** As Kafka prints it (`Uuid.toString`), so it matches kafka-topics.sh output. */
  topicId: string;
  internal: boolean;
  partitionCount: number;
  replicationFactor: number;
  /** Configs not at their defaults, as TopicCommand's `Configs:` column. */
  configs: Record<string, string | null>;
  partitions: PartitionDescription[];
}


/** A topic id as Kafka prints it (`Uuid.toString`): the 16 bytes in URL-safe base64, unpadded. */
function kafkaUuidString(uuid: string): string {
  return Buffer.from(uuid.replace(/-/g, ''), 'hex').toString('base64url');
}

export async function listTopics(client: KafkaClient, excludeInternal: boolean): Promise<string[]> {
  const md = await client.metadata(null);
  return md.topics
    .filter((t) => t.errorCode === ErrorCode.NONE && t.name !== null && !(excludeInternal && (t.isInternal || t.name.startsWith('__'))))
    .map((t) => t.name!)
    .sort();
}

export async function describeTopics(client: KafkaClient, names: readonly string[] | null, excludeInternal: boolean): Promise<TopicDescription[]> {
  const md = await client.metadata(names);
  const topics = md.topics.filter((t) => !(names === null && excludeInternal && t.isInternal));
  for (const t of topics) check(t.errorCode, null, `topic '${t.name ?? t.topicId}'`);
  topics.sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''));
  const configs = topics.length === 0 ? { results: [] } : await client.send(Apis.DescribeConfigs, {
    resources: topics.map((t) => ({ resourceType: 2, resourceName: t.name!, configurationKeys: null })),
    includeSynonyms: false,
    includeDocumentation: false,
  });
  const byName = new Map(configs.results.map((r) => [r.resourceName, r]));
  return topics.map((t) => {
    const partitions = [...t.partitions].sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => ({
      partition: p.partitionIndex,
      leader: p.leaderId < 0 ? null : p.leaderId,
      replicas: p.replicaNodes,
      isr: p.isrNodes,
    }));
    const overrides: Record<string, string | null> = {};
    const cr = byName.get(t.name!);
    if (cr) {
      check(cr.errorCode, cr.errorMessage, `configs of topic '${t.name}'`);
      for (const c of [...cr.configs].sort((a, b) => a.name.localeCompare(b.name))) if (c.configSource !== DEFAULT_CONFIG) overrides[c.name] = c.isSensitive ? null : c.value;
    }
    return {
      topic: t.name!,
      topicId: kafkaUuidString(t.topicId),
      internal: t.isInternal,
      partitionCount: partitions.length,
      replicationFactor: partitions[0]?.replicas.length ?? 0,
      configs: overrides,
      partitions,
    };
  });
}

/** TopicCommand's describe lines: the topic line, then one tab-led line per partition. */
function formatTopic(d: TopicDescription, withPartitions: boolean): string[] {
  const configs = Object.entries(d.configs).map(([k, v]) => `${k}=${v ?? 'null'}`).join(',');
  const head = `Topic: ${d.topic}${d.topicId !== ZERO_UUID ? `\tTopicId: ${d.topicId}` : ''}\tPartitionCount: ${d.partitionCount}\tReplicationFactor: ${d.replicationFactor}\tConfigs: ${configs}`;
  if (!withPartitions) return [head];
  return [head, ...d.partitions.map((p) => formatPartition(d.topic, p))];
}

function formatPartition(topic: string, p: TopicDescription['partitions'][number]): string {
  return `\tTopic: ${topic}\tPartition: ${p.partition}\tLeader: ${p.leader ?? 'none'}\tReplicas: ${p.replicas.join(',')}\tIsr: ${p.isr.join(',')}\tElr: \tLastKnownElr: `;
}

/** TopicCommand's --under-replicated-partitions: the partition lines alone, of those missing a replica in their ISR. */
export function underReplicatedLines(ds: readonly TopicDescription[]): string[] {
  return ds.flatMap((d) => d.partitions.filter((p) => p.isr.length < p.replicas.length).map((p) => formatPartition(d.topic, p)));
}

interface Options {
  topic: string | undefined;
  partitions: number | undefined;
  replicationFactor: number | undefined;
  configs: [string, string][];
  ifExists: boolean;
  ifNotExists: boolean;
  excludeInternal: boolean;
  withOverrides: boolean;
  underReplicated: boolean;
  json: boolean;
}

async function create(client: KafkaClient, o: Options, out: Out): Promise<void> {
  const res = await client.send(Apis.CreateTopics, {
    topics: [{ name: o.topic!, numPartitions: o.partitions ?? -1, replicationFactor: o.replicationFactor ?? -1, assignments: [], configs: o.configs.map(([name, value]) => ({ name, value })) }],
    timeoutMs: 30_000,
    validateOnly: false,
  });
  const r = res.topics[0];
  if (!r) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'CreateTopics answered no topic');
  if (r.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS && o.ifNotExists) {
    if (o.json) out(JSON.stringify({ topic: o.topic, created: false }));
    return;
  }
  check(r.errorCode, r.errorMessage, `cannot create topic '${o.topic}'`);
  if (o.json) out(JSON.stringify({ topic: r.name, topicId: kafkaUuidString(r.topicId), partitions: r.numPartitions, replicationFactor: r.replicationFactor, created: true }));
  else out(`Created topic ${r.name}.`);
}

async function remove(client: KafkaClient, o: Options, out: Out): Promise<void> {
  const res = await client.send(Apis.DeleteTopics, { topicNames: [o.topic!], timeoutMs: 30_000 });
  const r = res.responses[0];
  if (!r) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'DeleteTopics answered no topic');
  if (r.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && o.ifExists) {
    if (o.json) out(JSON.stringify({ topic: o.topic, deleted: false }));
    return;
  }
  check(r.errorCode, r.errorMessage, `cannot delete topic '${o.topic}'`);
  if (o.json) out(JSON.stringify({ topic: o.topic, deleted: true }));
}

async function alter(client: KafkaClient, o: Options, out: Out): Promise<void> {
  const res = await client.send(Apis.CreatePartitions, { topics: [{ name: o.topic!, count: o.partitions!, assignments: null }], timeoutMs: 30_000, validateOnly: false });
  const r = res.results[0];
  if (!r) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'CreatePartitions answered no topic');
  if (r.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && o.ifExists) return;
  check(r.errorCode, r.errorMessage, `cannot alter topic '${o.topic}'`);
  if (o.json) out(JSON.stringify({ topic: o.topic, partitions: o.partitions }));
}

function positiveInt(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 2 ** 31 - 1) throw new UsageError(`${flag} must be a positive integer, not '${v}'`);
  return n;
}

/** `fjord topics`. Returns the exit code; `out`/`err` receive whole lines. */
export async function runTopicsCli(argv: readonly string[], io: { out: Out; err: Out } = { out: (l) => console.log(l), err: (l) => console.error(l) }): Promise<number> {
  let o: Options;
  let action: 'create' | 'list' | 'describe' | 'delete' | 'alter';
  let bootstrap: string;
  try {
    const parsed = parseCommand(TOPICS, argv, io);
    if ('exit' in parsed) return parsed.exit;
    const { values } = parsed;
    const actions = (['create', 'list', 'describe', 'delete', 'alter'] as const).filter((a) => values[a]);
    if (actions.length !== 1) throw new UsageError('give exactly one of --create, --list, --describe, --delete, --alter');
    action = actions[0]!;
    o = {
      topic: values.topic,
      partitions: positiveInt('--partitions', values.partitions),
      replicationFactor: positiveInt('--replication-factor', values['replication-factor']),
      configs: values.config.flatMap((c) => parseConfigList(c)),
      ifExists: values['if-exists'],
      ifNotExists: values['if-not-exists'],
      excludeInternal: values['exclude-internal'],
      withOverrides: values['topics-with-overrides'],
      underReplicated: values['under-replicated-partitions'],
      json: values.json,
    };
    if ((action === 'create' || action === 'delete' || action === 'alter') && o.topic === undefined) throw new UsageError(`--${action} needs --topic`);
    if (action === 'alter' && o.partitions === undefined) throw new UsageError('--alter needs --partitions');
    if (action !== 'create' && (o.replicationFactor !== undefined || o.configs.length > 0 || o.ifNotExists)) throw new UsageError('--replication-factor, --config and --if-not-exists go with --create');
    if ((o.withOverrides || o.underReplicated) && action !== 'describe') throw new UsageError('--topics-with-overrides and --under-replicated-partitions go with --describe');
    if (o.withOverrides && o.underReplicated) throw new UsageError('give one of --topics-with-overrides or --under-replicated-partitions');
    if (action !== 'create' && action !== 'alter' && o.partitions !== undefined) throw new UsageError('--partitions goes with --create or --alter');
    bootstrap = values['bootstrap-server'];
  } catch (e) {
    io.err(usageLine('topics', (e as Error).message));
    return Exit.USAGE;
  }
  return runAgainst('topics', bootstrap, io.err, 'Error while executing topic command', async (client) => {
    switch (action) {
      case 'create':
        await create(client, o, io.out);
        break;
      case 'delete':
        await remove(client, o, io.out);
        break;
      case 'alter':
        await alter(client, o, io.out);
        break;
      case 'list': {
        const names = await listTopics(client, o.excludeInternal);
        if (o.json) io.out(JSON.stringify(names, null, 2));
        // TopicCommand prints the names as one println, so an empty list is one empty line.
        else io.out(names.join('\n'));
        break;
      }
      case 'describe': {
        let ds: TopicDescription[];
        try {
          ds = await describeTopics(client, o.topic === undefined ? null : [o.topic], o.excludeInternal);
        } catch (e) {
          if (o.ifExists && e instanceof KafkaError && e.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) ds = [];
          else throw e;
        }
        if (o.underReplicated) {
          if (o.json) io.out(JSON.stringify(ds.flatMap((d) => d.partitions.filter((p) => p.isr.length < p.replicas.length).map((p) => ({ topic: d.topic, ...p }))), null, 2));
          else for (const line of underReplicatedLines(ds)) io.out(line);
          break;
        }
        if (o.withOverrides) ds = ds.filter((d) => Object.keys(d.configs).length > 0);
        if (o.json) io.out(JSON.stringify(o.withOverrides ? ds.map(({ partitions: _p, ...t }) => t) : ds, null, 2));
        else for (const d of ds) for (const line of formatTopic(d, !o.withOverrides)) io.out(line);
        break;
      }
    }
  });
}
