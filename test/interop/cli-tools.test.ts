/**
 * `fjord topics` / `fjord configs` beside Apache Kafka's own kafka-topics.sh and kafka-configs.sh
 * (their main classes `org.apache.kafka.tools.TopicCommand` and `kafka.admin.ConfigCommand`, on
 * Kafka's classpath), run with the same flags against the same Fjord node: the same lines on
 * stdout, the same exit codes.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KAFKA_VERSION, LOG4J2_CONFIG, ROOT, clientsClasspath, kafkaClasspath } from './lib/paths.js';
import { run, type RunResult } from './lib/run.js';
import { useFjordNode } from './lib/scenario.js';

const TOPIC_COMMAND = 'org.apache.kafka.tools.TopicCommand';
const CONFIG_COMMAND = 'kafka.admin.ConfigCommand';

const fjordNode = useFjordNode();

/** TopicCommand lives in kafka-tools; ConfigCommand still in Kafka's core jar (Scala), on the broker's classpath. */
function kafkaTool(mainClass: string, args: readonly string[]): Promise<RunResult> {
  const classpath = mainClass === CONFIG_COMMAND ? kafkaClasspath(KAFKA_VERSION) : clientsClasspath();
  return run(
    'java',
    ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`, '-Dfjord.loglevel=ERROR', '-cp', classpath, mainClass, '--bootstrap-server', fjordNode.get().bootstrap, ...args],
    { timeoutMs: 120_000 },
  );
}

function fjordTool(command: 'topics' | 'configs', args: readonly string[]): Promise<RunResult> {
  return run(process.execPath, [join(ROOT, 'bin/fjord.js'), command, '--bootstrap-server', fjordNode.get().bootstrap, ...args], { timeoutMs: 60_000, cwd: ROOT });
}

/** Both tools with the same flags; their stdout and exit codes. */
async function both(command: 'topics' | 'configs', args: readonly string[]): Promise<{ kafka: RunResult; fjord: RunResult }> {
  const kafka = await kafkaTool(command === 'topics' ? TOPIC_COMMAND : CONFIG_COMMAND, args);
  const fjord = await fjordTool(command, args);
  return { kafka, fjord };
}

function expectSame(r: { kafka: RunResult; fjord: RunResult }, code: number): void {
  expect(r.kafka.code, r.kafka.stderr).toBe(code);
  expect(r.fjord.code, r.fjord.stderr).toBe(code);
  expect(r.fjord.stdout).toBe(r.kafka.stdout);
}

describe('fjord topics and configs print what Kafka\'s tools print, against the same Fjord node', () => {
  it('kafka-topics: create, describe, list, alter, delete', async () => {
    const k = await kafkaTool(TOPIC_COMMAND, ['--create', '--topic', 'made-by-kafka', '--partitions', '3', '--replication-factor', '1', '--config', 'retention.ms=1000000']);
    const f = await fjordTool('topics', ['--create', '--topic', 'made-by-fjord', '--partitions', '3', '--replication-factor', '1', '--config', 'retention.ms=1000000']);
    expect(k).toMatchObject({ code: 0, stdout: 'Created topic made-by-kafka.\n' });
    expect(f).toMatchObject({ code: 0, stdout: 'Created topic made-by-fjord.\n' });

    const dup = await both('topics', ['--create', '--topic', 'made-by-kafka', '--partitions', '1']);
    expect(dup.kafka.code).toBe(1);
    expect(dup.kafka.stdout + dup.kafka.stderr).toContain("Topic 'made-by-kafka' already exists");
    expect(dup.fjord.code).toBe(1);
    expect(dup.fjord.stderr).toContain('TOPIC_ALREADY_EXISTS');

    expectSame(await both('topics', ['--describe', '--topic', 'made-by-kafka']), 0);
    expectSame(await both('topics', ['--describe', '--topic', 'made-by-fjord']), 0);
    expectSame(await both('topics', ['--list', '--exclude-internal']), 0);

    expect(await kafkaTool(TOPIC_COMMAND, ['--alter', '--topic', 'made-by-kafka', '--partitions', '5'])).toMatchObject({ code: 0, stdout: '' });
    expect(await fjordTool('topics', ['--alter', '--topic', 'made-by-fjord', '--partitions', '5'])).toMatchObject({ code: 0, stdout: '' });
    // Not more partitions than it has: INVALID_PARTITIONS from the broker, exit 1 from both tools.
    const same = await both('topics', ['--alter', '--topic', 'made-by-kafka', '--partitions', '5']);
    expect([same.kafka.code, same.fjord.code]).toEqual([1, 1]);
    expect(same.fjord.stderr).toContain('INVALID_PARTITIONS');
    expectSame(await both('topics', ['--describe', '--topic', 'made-by-kafka']), 0);
    expectSame(await both('topics', ['--describe', '--topic', 'made-by-fjord']), 0);

    expect(await kafkaTool(TOPIC_COMMAND, ['--delete', '--topic', 'made-by-fjord'])).toMatchObject({ code: 0, stdout: '' });
    expect(await fjordTool('topics', ['--delete', '--topic', 'made-by-kafka'])).toMatchObject({ code: 0, stdout: '' });
    expectSame(await both('topics', ['--delete', '--topic', 'made-by-kafka', '--if-exists']), 0);
    expectSame(await both('topics', ['--list', '--exclude-internal']), 0);
  });

  it('kafka-configs: alter a topic\'s and a group\'s configs, describe them, with --all too', async () => {
    expect((await fjordTool('topics', ['--create', '--topic', 'configured', '--partitions', '1'])).code).toBe(0);
    const k = await kafkaTool(CONFIG_COMMAND, ['--entity-type', 'topics', '--entity-name', 'configured', '--alter', '--add-config', 'segment.ms=100000,max.message.bytes=2000']);
    expect(k.code, k.stderr).toBe(0);
    const f = await fjordTool('configs', ['--entity-type', 'topics', '--entity-name', 'configured', '--alter', '--add-config', 'retention.ms=5000', '--delete-config', 'max.message.bytes']);
    expect(f.code, f.stderr).toBe(0);
    expect(f.stdout).toBe(k.stdout);

    expectSame(await both('configs', ['--entity-type', 'topics', '--entity-name', 'configured', '--describe']), 0);
    expectSame(await both('configs', ['--entity-type', 'topics', '--entity-name', 'configured', '--describe', '--all']), 0);
    expectSame(await both('configs', ['--entity-type', 'brokers', '--entity-default', '--describe']), 0);

    const g = await kafkaTool(CONFIG_COMMAND, ['--entity-type', 'groups', '--entity-name', 'billing', '--alter', '--add-config', 'consumer.session.timeout.ms=50000']);
    expect(g.code, g.stderr).toBe(0);
    expect((await fjordTool('configs', ['--entity-type', 'groups', '--entity-name', 'billing', '--alter', '--add-config', 'consumer.session.timeout.ms=50000'])).stdout).toBe(g.stdout);
    expectSame(await both('configs', ['--entity-type', 'groups', '--entity-name', 'billing', '--describe']), 0);
  });
});
