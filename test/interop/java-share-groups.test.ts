/**
 * KIP-932 share groups with the Java 4.4 KafkaShareConsumer (ShareGroups.java) against a Fjord
 * node: at-least-once consumption of everything produced, explicit acknowledgement (RELEASE
 * redelivers with delivery count 2, REJECT never again), redelivery to another member once a
 * consumer that never acknowledges has had its acquisition locks expire, three consumers sharing
 * one partition (each record to one of them at a time), a read_committed group reading a
 * transactional producer's committed, aborted and open transactions, and the stock `kafka-share-groups`
 * tool (ShareGroupCommand): --list, --describe (start offsets), --describe --state,
 * --delete-offsets and --delete.
 *
 * Fjord only: the shared Apache Kafka broker of this suite runs without share groups enabled.
 */
import { describe, expect, it } from 'vitest';
import { javaTool, mustSucceed } from './lib/java.js';
import { LOG4J2_CONFIG, KAFKA_NEWEST_VERSION, clientsClasspath } from './lib/paths.js';
import { lastJsonLine, run, tail } from './lib/run.js';
import { useFjordNode } from './lib/scenario.js';

// The lock-timeout scenario gives its group 2 s locks (Kafka's floor is 15 s unless lowered so).
const fjord = useFjordNode({ overrides: { 'group.share.min.record.lock.duration.ms': '1000' } });

const SHARE_GROUPS_TOOL = 'org.apache.kafka.tools.consumer.group.ShareGroupCommand';

type Obs = Record<string, unknown>;

async function shareScenario(name: string, opts: Readonly<Record<string, string>>): Promise<Obs> {
  const args = [
    '-Xmx384m',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`,
    `-Dfjord.loglevel=${process.env['FJORD_INTEROP_LOG_LEVEL'] ?? 'ERROR'}`,
    '-cp',
    clientsClasspath(KAFKA_NEWEST_VERSION),
    'fjord.interop.ShareGroups',
    name,
    `bootstrap=${fjord.get().bootstrap}`,
  ];
  for (const [k, v] of Object.entries(opts)) args.push(`${k}=${v}`);
  const r = await run('java', args, { timeoutMs: 150_000 });
  const obs = lastJsonLine(r);
  if (r.code !== 0 || 'error' in obs) throw new Error(`ShareGroups ${name} failed: ${String(obs['error'])}: ${String(obs['message'])}\n${tail(r.stderr, 15)}`);
  return obs;
}

async function shareGroupsTool(...args: string[]): Promise<string> {
  return mustSucceed(`kafka-share-groups ${args.join(' ')}`, await javaTool(SHARE_GROUPS_TOOL, ['--bootstrap-server', fjord.get().bootstrap, ...args])).stdout;
}

/** The data rows of a tool table whose first column is `first`, split on whitespace. */
function rows(out: string, first: string): string[][] {
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((cols) => cols[0] === first);
}

describe('share groups with the Java 4.4 KafkaShareConsumer', () => {
  it('consumes everything produced at least once, each record once when acknowledged in time', async () => {
    const obs = await shareScenario('consume', { topic: 'share-consume', group: 'sg-consume', count: '300' });
    expect(obs).toEqual({ produced: 300, distinct: 300, deliveries: 300, valuesMatch: true });
  });

  it('redelivers released records with delivery count 2 and never a rejected one', async () => {
    const obs = await shareScenario('explicit', { topic: 'share-explicit', group: 'sg-explicit' });
    const expected: Record<string, number[]> = {};
    for (let o = 0; o < 20; o++) expected[String(o)] = o % 2 === 0 ? [1, 2] : [1];
    expect(obs).toEqual({ deliveryCounts: expected, commitErrors: 0 });
  });

  it('hands the records of a consumer that never acknowledges to another once their locks expire', async () => {
    const obs = await shareScenario('lock-timeout', { topic: 'share-lock', group: 'sg-lock' });
    const all = Array.from({ length: 10 }, (_, i) => i);
    expect(obs).toEqual({ first: all, second: all, secondDeliveryCounts: all.map(() => 2) });
  });

  it('share.isolation.level=read_committed: committed transactions only, an open one once it commits, never an aborted one', async () => {
    const obs = await shareScenario('read-committed', { topic: 'share-read-committed', group: 'sg-read-committed' });
    expect(obs).toEqual({ beforeCommit: ['committed-0', 'committed-1', 'committed-2'], afterCommit: ['open-0', 'open-1'] });
  });

  it('shares one partition between three consumers, each record delivered to one of them', async () => {
    const obs = await shareScenario('shared', { topic: 'share-shared', group: 'sg-shared', count: '300' });
    expect(obs).toMatchObject({ produced: 300, distinct: 300, duplicates: 0, failures: [] });
    expect(obs['consumers']).toBeGreaterThan(1);
  });

  it('kafka-share-groups lists, describes, deletes offsets of and deletes a share group', async () => {
    await shareScenario('consume', { topic: 'share-tool', group: 'sg-tool', count: '50' });
    expect(rows(await shareGroupsTool('--list'), 'sg-tool')).toEqual([['sg-tool']]);
    expect(rows(await shareGroupsTool('--describe', '--group', 'sg-tool'), 'sg-tool')).toEqual([['sg-tool', 'share-tool', '0', '50']]);
    const state = rows(await shareGroupsTool('--describe', '--state', '--group', 'sg-tool'), 'sg-tool');
    expect(state.map((r) => [r[0], r.at(-2), r.at(-1)])).toEqual([['sg-tool', 'Empty', '0']]);
    expect(rows(await shareGroupsTool('--delete-offsets', '--group', 'sg-tool', '--topic', 'share-tool'), 'share-tool')).toEqual([['share-tool', 'Successful']]);
    expect(rows(await shareGroupsTool('--describe', '--group', 'sg-tool'), 'sg-tool')).toEqual([]);
    expect(await shareGroupsTool('--delete', '--group', 'sg-tool')).toContain("Deletion of requested share groups ('sg-tool') was successful.");
    expect(rows(await shareGroupsTool('--list'), 'sg-tool')).toEqual([]);
  });
});
