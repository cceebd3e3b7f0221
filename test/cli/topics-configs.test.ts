/**
 * `fjord topics` and `fjord configs` as an operator runs them: the built `node bin/fjord.js` as
 * a real process against a real Fjord node on loopback, asserting what it prints (Kafka's
 * kafka-topics.sh / kafka-configs.sh lines and the --json form) and its exit codes.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startNode, type RunningNode } from '../helpers/node.js';

let node: RunningNode;

interface Result { code: number; out: string; err: string }

function fjord(...argv: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(ROOT, 'bin/fjord.js'), ...argv], { cwd: ROOT }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, out: stdout, err: stderr });
    });
  });
}

const topics = (...argv: string[]): Promise<Result> => fjord('topics', '--bootstrap-server', node.bootstrap, ...argv);
const configs = (...argv: string[]): Promise<Result> => fjord('configs', '--bootstrap-server', node.bootstrap, ...argv);

beforeAll(async () => {
  node = await startNode();
});

afterAll(async () => {
  await node?.destroy();
});

describe('fjord topics', () => {
  it('creates a topic with partitions and configs, and refuses it a second time with TOPIC_ALREADY_EXISTS', async () => {
    const created = await topics('--create', '--topic', 'orders', '--partitions', '3', '--replication-factor', '1', '--config', 'retention.ms=3600000', '--config', 'cleanup.policy=compact');
    expect(created).toMatchObject({ code: 0, out: 'Created topic orders.\n' });

    const again = await topics('--create', '--topic', 'orders');
    expect(again.code).toBe(1);
    expect(again.out).toBe('');
    expect(again.err).toContain('TOPIC_ALREADY_EXISTS');

    const quiet = await topics('--create', '--topic', 'orders', '--if-not-exists');
    expect(quiet).toMatchObject({ code: 0, out: '', err: '' });
  });

  it('lists topics, with and without the internal ones', async () => {
    await topics('--create', '--topic', 'payments', '--partitions', '1');
    const all = await topics('--list');
    expect(all.code).toBe(0);
    const names = all.out.trim().split('\n');
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['orders', 'payments']));

    const external = await topics('--list', '--exclude-internal');
    expect(external.out.trim().split('\n').filter((n) => n.startsWith('__'))).toEqual([]);

    const json = await topics('--list', '--exclude-internal', '--json');
    expect(JSON.parse(json.out)).toEqual(external.out.trim().split('\n'));
  });

  it('describes a topic in Kafka\'s lines, and the same facts in --json', async () => {
    const json = await topics('--describe', '--topic', 'orders', '--json');
    expect(json.code).toBe(0);
    const [d] = JSON.parse(json.out) as { topic: string; topicId: string; partitionCount: number; replicationFactor: number; configs: Record<string, string> }[];
    expect(d).toMatchObject({ topic: 'orders', partitionCount: 3, replicationFactor: 1 });
    expect(d!.configs).toMatchObject({ 'retention.ms': '3600000', 'cleanup.policy': 'compact' });
    // Kafka's Uuid.toString: 16 bytes in URL-safe base64.
    expect(d!.topicId).toMatch(/^[A-Za-z0-9_-]{22}$/);

    const human = await topics('--describe', '--topic', 'orders');
    expect(human.code).toBe(0);
    expect(human.out.endsWith('\n')).toBe(true);
    const lines = human.out.slice(0, -1).split('\n');
    expect(lines[0]).toMatch(new RegExp(`^Topic: orders\\tTopicId: ${d!.topicId}\\tPartitionCount: 3\\tReplicationFactor: 1\\tConfigs: (.*,)?cleanup\\.policy=compact(,.*)?$`));
    expect(lines[0]).toContain('retention.ms=3600000');
    expect(lines.slice(1)).toEqual([0, 1, 2].map((p) => `\tTopic: orders\tPartition: ${p}\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: `));
  });

  it('describes only the topics with overrides, without partition lines, when asked', async () => {
    await topics('--create', '--topic', 'plain', '--partitions', '1');
    const r = await topics('--describe', '--topics-with-overrides', '--exclude-internal');
    expect(r.code).toBe(0);
    const heads = r.out.trimEnd().split('\n');
    expect(heads.every((l) => l.startsWith('Topic: '))).toBe(true);
    expect(heads.some((l) => l.startsWith('Topic: orders\t'))).toBe(true);
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist', async () => {
    const r = await topics('--describe', '--topic', 'nope');
    expect(r.code).toBe(1);
    expect(r.err).toContain('UNKNOWN_TOPIC_OR_PARTITION');
  });

  it('adds partitions with --alter, and refuses to shrink with INVALID_PARTITIONS', async () => {
    expect(await topics('--alter', '--topic', 'orders', '--partitions', '5')).toMatchObject({ code: 0, out: '' });
    const d = JSON.parse((await topics('--describe', '--topic', 'orders', '--json')).out) as { partitionCount: number }[];
    expect(d[0]!.partitionCount).toBe(5);

    const shrink = await topics('--alter', '--topic', 'orders', '--partitions', '2');
    expect(shrink.code).toBe(1);
    expect(shrink.err).toContain('INVALID_PARTITIONS');
  });

  it('deletes a topic, then says UNKNOWN_TOPIC_OR_PARTITION unless --if-exists', async () => {
    expect(await topics('--delete', '--topic', 'payments')).toMatchObject({ code: 0, out: '' });
    expect((await topics('--list')).out.split('\n')).not.toContain('payments');
    const again = await topics('--delete', '--topic', 'payments');
    expect(again.code).toBe(1);
    expect(again.err).toContain('UNKNOWN_TOPIC_OR_PARTITION');
    expect(await topics('--delete', '--topic', 'payments', '--if-exists')).toMatchObject({ code: 0, err: '' });
  });

  it('exits 2 with one line on bad usage, and 0 with the usage for --help', async () => {
    for (const argv of [['--list', '--describe'], ['--create'], ['--alter', '--topic', 'orders'], ['--list', '--bogus'], ['--create', '--topic', 'x', '--partitions', 'zero']]) {
      const r = await topics(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err).toMatch(/^fjord topics: .+ \(see 'fjord topics --help'\)\n$/);
    }
    const help = await fjord('topics', '--help');
    expect(help.code).toBe(0);
    expect(help.out).toContain('--create --topic T');
  });

  it('exits 1 naming the error when the broker is unreachable', async () => {
    const r = await fjord('topics', '--bootstrap-server', '127.0.0.1:1', '--list');
    expect(r.code).toBe(1);
    expect(r.err).toContain('NETWORK_EXCEPTION');
  });
});

describe('fjord configs', () => {
  it('alters a topic\'s configs incrementally and describes the dynamic ones as kafka-configs.sh does', async () => {
    await topics('--create', '--topic', 'audit', '--partitions', '1', '--config', 'retention.ms=1000');
    const alter = await configs('--entity-type', 'topics', '--entity-name', 'audit', '--alter', '--add-config', 'segment.ms=100000,max.message.bytes=2000', '--delete-config', 'retention.ms');
    expect(alter).toMatchObject({ code: 0, out: 'Completed updating config for topic audit.\n' });

    const d = await configs('--entity-type', 'topics', '--entity-name', 'audit', '--describe');
    expect(d.code).toBe(0);
    const lines = d.out.trimEnd().split('\n');
    expect(lines[0]).toBe('Dynamic configs for topic audit are:');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^ {2}max\.message\.bytes=2000 sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:max\.message\.bytes=2000, DEFAULT_CONFIG:message\.max\.bytes=\d+\}$/);
    expect(lines[2]).toMatch(/^ {2}segment\.ms=100000 sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:segment\.ms=100000(, .*)?\}$/);

    const json = JSON.parse((await configs('--entity-type', 'topics', '--entity-name', 'audit', '--describe', '--json')).out) as { name: string; value: string; source: string }[];
    expect(json.map((c) => [c.name, c.value, c.source])).toEqual([['max.message.bytes', '2000', 'DYNAMIC_TOPIC_CONFIG'], ['segment.ms', '100000', 'DYNAMIC_TOPIC_CONFIG']]);
  });

  it('describes every config with --all, defaults included', async () => {
    const r = await configs('--entity-type', 'topics', '--entity-name', 'audit', '--describe', '--all');
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toBe('All configs for topic audit are:');
    expect(lines).toContain('  segment.ms=100000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:segment.ms=100000}');
    expect(lines.some((l) => l.startsWith('  cleanup.policy=delete sensitive=false synonyms={DEFAULT_CONFIG:log.cleanup.policy=delete}'))).toBe(true);
  });

  it('sets and removes a cluster-wide broker default', async () => {
    const set = await configs('--entity-type', 'brokers', '--entity-default', '--alter', '--add-config', 'log.retention.ms=7200000');
    expect(set).toMatchObject({ code: 0, out: 'Completed updating default config for brokers in the cluster.\n' });
    const d = await configs('--entity-type', 'brokers', '--entity-default', '--describe');
    expect(d.out.split('\n')[0]).toBe('Default configs for brokers in the cluster are:');
    expect(d.out).toContain('  log.retention.ms=7200000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=7200000');
    await configs('--entity-type', 'brokers', '--entity-default', '--alter', '--delete-config', 'log.retention.ms');
    expect((await configs('--entity-type', 'brokers', '--entity-default', '--describe')).out).not.toContain('log.retention.ms=');
  });

  it('sets a group config and describes it with its default as synonym', async () => {
    const set = await configs('--entity-type', 'groups', '--entity-name', 'billing', '--alter', '--add-config', 'consumer.session.timeout.ms=50000');
    expect(set).toMatchObject({ code: 0, out: 'Completed updating config for group billing.\n' });
    const d = await configs('--entity-type', 'groups', '--entity-name', 'billing', '--describe');
    expect(d.out).toBe('Dynamic configs for group billing are:\n  consumer.session.timeout.ms=50000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:consumer.session.timeout.ms=50000, DEFAULT_CONFIG:group.consumer.session.timeout.ms=45000}\n');
  });

  it('names the Kafka error of a refused change and exits 1', async () => {
    const unknown = await configs('--entity-type', 'topics', '--entity-name', 'audit', '--alter', '--add-config', 'no.such.config=1');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('INVALID_CONFIG');
    const missing = await configs('--entity-type', 'topics', '--entity-name', 'nope', '--describe');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('UNKNOWN_TOPIC_OR_PARTITION');
  });

  it('exits 2 on bad usage', async () => {
    for (const argv of [['--entity-type', 'users', '--entity-name', 'x', '--describe'], ['--entity-type', 'topics', '--describe'], ['--entity-type', 'topics', '--entity-name', 'a', '--alter'], ['--entity-type', 'topics', '--entity-default', '--describe'], ['--entity-type', 'topics', '--entity-name', 'a', '--alter', '--add-config', 'novalue']]) {
      const r = await configs(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err).toMatch(/^fjord configs: .+ \(see 'fjord configs --help'\)\n$/);
    }
  });
});
