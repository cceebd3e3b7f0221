import { Apis } from '../client/apis.js';
import { KafkaClient } from '../client/kafka-client.js';
import { decodeConsumerProtocolAssignment } from '../protocol/generated/messages/consumer-protocol-assignment.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { Reader } from '../protocol/reader.js';
import { consoleIo, Exit, parseCommand, usageLine, type CliIo, type CommandSpec, type OptionSpecs } from './cli-common.js';

const GROUPS = {
  command: 'groups',
  synopsis: `usage: fjord groups [--bootstrap-server HOST:PORT] (--list [--state S]... [--type classic|consumer]... | --describe GROUP) [--json]`,
  options: {
    'bootstrap-server': { type: 'string', default: '127.0.0.1:9092' },
    list: { type: 'boolean', default: false },
    describe: { type: 'string' },
    state: { type: 'string', multiple: true, default: [] },
    type: { type: 'string', multiple: true, default: [] },
    json: { type: 'boolean', default: false },
  },
  help: {
    'bootstrap-server': ['HOST:PORT', 'the node to ask'],
    list: 'list the groups (GROUP, TYPE, STATE, PROTOCOL-TYPE)',
    describe: ['GROUP', "the group's state, members, and per partition its committed offset, the log end offset and the lag"],
    state: ['S', 'with --list: only groups in this state (Stable, Empty, ...)'],
    type: ['T', 'with --list: only groups of this type (classic or consumer)'],
    json: 'machine-readable output',
  },
} as const satisfies CommandSpec<OptionSpecs>;

interface PartitionRow {
  topic: string;
  partition: number;
  currentOffset: number | null;
  logEndOffset: number | null;
  lag: number | null;
  consumerId: string | null;
  host: string | null;
  clientId: string | null;
}

interface GroupDescription {
  group: string;
  type: 'classic' | 'consumer';
  state: string;
  protocolType: string;
  protocol: string;
  members: { memberId: string; instanceId: string | null; clientId: string; host: string; partitions: { topic: string; partition: number }[] }[];
  partitions: PartitionRow[];
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

const dash = (v: number | string | null): string => (v === null || v === '' ? '-' : String(v));

export async function listGroups(client: KafkaClient, states: string[], types: string[]) {
  const res = await client.send(Apis.ListGroups, { statesFilter: states, typesFilter: types });
  if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, `ListGroups failed with error ${res.errorCode}`);
  return res.groups.map((g) => ({ group: g.groupId, type: g.groupType, state: g.groupState, protocolType: g.protocolType })).sort((a, b) => a.group.localeCompare(b.group));
}

export async function describeGroup(client: KafkaClient, groupId: string): Promise<GroupDescription | null> {
  const [dg, cg, fetched] = await Promise.all([
    client.send(Apis.DescribeGroups, { groups: [groupId] }),
    client.send(Apis.ConsumerGroupDescribe, { groupIds: [groupId] }).catch(() => null),
    client.send(Apis.OffsetFetch, { groups: [{ groupId, topics: null }], requireStable: false }),
  ]);
  const classic = dg.groups[0];
  const consumer = cg?.groups[0];
  let desc: GroupDescription;
  if (consumer && consumer.errorCode === ErrorCode.NONE) {
    desc = {
      group: groupId,
      type: 'consumer',
      state: consumer.groupState,
      protocolType: 'consumer',
      protocol: consumer.assignorName,
      members: consumer.members.map((m) => ({
        memberId: m.memberId,
        instanceId: m.instanceId,
        clientId: m.clientId,
        host: m.clientHost,
        partitions: m.assignment.topicPartitions.flatMap((t) => t.partitions.map((p) => ({ topic: t.topicName, partition: p }))),
      })),
      partitions: [],
    };
  } else if (classic && classic.errorCode === ErrorCode.NONE && classic.groupState !== 'Dead') {
    desc = {
      group: groupId,
      type: 'classic',
      state: classic.groupState,
      protocolType: classic.protocolType,
      protocol: classic.protocolData,
      members: classic.members.map((m) => {
        let partitions: { topic: string; partition: number }[] = [];
        if (classic.protocolType === 'consumer' && m.memberAssignment.length > 0) {
          try {
            const r = new Reader(m.memberAssignment);
            const a = decodeConsumerProtocolAssignment(r, Math.min(r.int16(), 3));
            partitions = a.assignedPartitions.flatMap((t) => t.partitions.map((p) => ({ topic: t.topic, partition: p })));
          } catch {
            partitions = [];
          }
        }
        return { memberId: m.memberId, instanceId: m.groupInstanceId, clientId: m.clientId, host: m.clientHost, partitions };
      }),
      partitions: [],
    };
  } else return null;

  const owner = new Map<string, GroupDescription['members'][number]>();
  for (const m of desc.members) for (const tp of m.partitions) owner.set(`${tp.topic}\0${tp.partition}`, m);
  const committed = new Map<string, number>();
  for (const t of fetched.groups[0]?.topics ?? []) for (const p of t.partitions) if (p.errorCode === ErrorCode.NONE && p.committedOffset >= 0n) committed.set(`${t.name}\0${p.partitionIndex}`, Number(p.committedOffset));
  const keys = [...new Set([...owner.keys(), ...committed.keys()])].map((k) => {
    const [topic, p] = k.split('\0') as [string, string];
    return { topic, partition: Number(p) };
  });
  keys.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
  const byTopic = new Map<string, number[]>();
  for (const k of keys) byTopic.set(k.topic, [...(byTopic.get(k.topic) ?? []), k.partition]);
  const ends = new Map<string, number>();
  if (byTopic.size > 0) {
    const lo = await client.send(Apis.ListOffsets, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [...byTopic].map(([name, ps]) => ({ name, partitions: ps.map((p) => ({ partitionIndex: p, currentLeaderEpoch: -1, timestamp: -1n })) })),
    });
    for (const t of lo.topics) for (const p of t.partitions) if (p.errorCode === ErrorCode.NONE) ends.set(`${t.name}\0${p.partitionIndex}`, Number(p.offset));
  }
  desc.partitions = keys.map(({ topic, partition }) => {
    const k = `${topic}\0${partition}`;
    const cur = committed.get(k) ?? null;
    const end = ends.get(k) ?? null;
    const m = owner.get(k);
    return { topic, partition, currentOffset: cur, logEndOffset: end, lag: cur !== null && end !== null ? Math.max(0, end - cur) : null, consumerId: m?.memberId ?? null, host: m?.host ?? null, clientId: m?.clientId ?? null };
  });
  return desc;
}

/** `fjord groups`: list and describe consumer groups of a node. Returns the exit code. */
export async function runGroupsCli(argv: readonly string[], io: CliIo = consoleIo): Promise<number> {
  const parsed = parseCommand(GROUPS, argv, io);
  if ('exit' in parsed) return parsed.exit;
  const { values } = parsed;
  if (values.list === (values.describe !== undefined)) {
    io.err(usageLine('groups', 'give exactly one of --list or --describe GROUP'));
    return Exit.USAGE;
  }
  const bootstrap = values['bootstrap-server'];
  let client: KafkaClient;
  try {
    // A bare host means Kafka's default port.
    client = new KafkaClient({ bootstrapServers: [bootstrap.includes(':') ? bootstrap : `${bootstrap}:9092`], clientId: 'fjord-groups', connectTimeoutMs: 10_000 });
  } catch (e) {
    io.err(`fjord groups: ${(e as Error).message}`);
    return Exit.KAFKA_ERROR;
  }
  try {
    if (values.list) {
      const groups = await listGroups(client, values.state, values.type);
      if (values.json) io.out(JSON.stringify(groups, null, 2));
      else if (groups.length === 0) io.out('no groups');
      else io.out(table([['GROUP', 'TYPE', 'STATE', 'PROTOCOL-TYPE'], ...groups.map((g) => [g.group, g.type, g.state, dash(g.protocolType)])]));
      return Exit.OK;
    }
    const d = await describeGroup(client, values.describe!);
    if (!d) {
      io.err(`fjord groups: group '${values.describe}' does not exist`);
      return Exit.KAFKA_ERROR;
    }
    if (values.json) {
      io.out(JSON.stringify(d, null, 2));
      return Exit.OK;
    }
    io.out(`group ${d.group}: ${d.type}, ${d.state}, ${d.members.length} member(s)${d.protocol ? `, assignor ${d.protocol}` : ''}\n`);
    if (d.partitions.length > 0) {
      io.out(
        table([
          ['TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LOG-END-OFFSET', 'LAG', 'CONSUMER-ID', 'HOST', 'CLIENT-ID'],
          ...d.partitions.map((p) => [p.topic, String(p.partition), dash(p.currentOffset), dash(p.logEndOffset), dash(p.lag), dash(p.consumerId), dash(p.host), dash(p.clientId)]),
        ]),
      );
    } else io.out('no partitions assigned and no offsets committed');
    if (d.members.length > 0) {
      io.out('');
      io.out(
        table([
          ['CONSUMER-ID', 'INSTANCE-ID', 'HOST', 'CLIENT-ID', '#PARTITIONS'],
          ...d.members.map((m) => [m.memberId, dash(m.instanceId), dash(m.host), dash(m.clientId), String(m.partitions.length)]),
        ]),
      );
    }
    return Exit.OK;
  } catch (e) {
    io.err(`fjord groups: ${(e as Error).message}`);
    return Exit.KAFKA_ERROR;
  } finally {
    client.close();
  }
}
