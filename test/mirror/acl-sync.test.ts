/**
 * ACL sync (spec §10.3) between Fjord node processes: ACLs created on the source appear on the
 * destination after a metadata refresh, deleted ones vanish, ones no `mirror.acls.include` rule
 * matches never cross, and destination-only ACLs are removed. A source without an authorizer
 * (Fjord or Apache Kafka, both answering SECURITY_DISABLED) leaves the destination's ACLs as they
 * are, and says so once; so does a destination without one. Plus the rule parser.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, Kafka, logLevel, ResourcePatternTypes, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { AclSyncSkip, describeAllAcls, parseAclRule, syncAcls, type MirrorAclBinding } from '../../src/mirror/acl-sync.js';
import { runClusterMirrorsCli } from '../../src/cli/cluster-mirrors.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { startKafkaSource, type KafkaBroker } from './helpers/kafka-source.js';
import { waitFor } from '../helpers/wait.js';

describe('mirror.acls.include rules', () => {
  const b = (over: Partial<MirrorAclBinding>): MirrorAclBinding => ({ resourceType: 2, resourceName: 'orders-1', patternType: 3, principal: 'User:alice', host: '*', operation: 3, permissionType: 3, ...over });
  it('matches by type, whole-name regex, operation, permission and principal; missing fields are *', () => {
    expect(parseAclRule('*')(b({}))).toBe(true);
    expect(parseAclRule('topic;orders-.*')(b({}))).toBe(true);
    expect(parseAclRule('TOPIC;orders')(b({}))).toBe(false); // whole name, not a substring
    expect(parseAclRule('GROUP')(b({}))).toBe(false);
    expect(parseAclRule('TOPIC;*;WRITE')(b({}))).toBe(false);
    expect(parseAclRule('TOPIC;*;READ;ALLOW;User:al.*')(b({}))).toBe(true);
    expect(parseAclRule('TOPIC;*;READ;DENY')(b({}))).toBe(false);
    expect(parseAclRule('*;*;*;*;User:bob')(b({}))).toBe(false);
  });
  it('makes a malformed rule match nothing', () => {
    expect(parseAclRule('TOPICS')(b({}))).toBe(false);
    expect(parseAclRule('TOPIC;(')(b({}))).toBe(false);
    expect(parseAclRule('TOPIC;*;READ;ALLOW;User:alice;extra')(b({}))).toBe(false);
  });
});

/** a → d: both with an authorizer. n: a Fjord node without one, mirrored into e (with one), as is kafka. */
let a: RunningNode;
let d: RunningNode;
let n: RunningNode;
let e: RunningNode;
let kafka: KafkaBroker;
const work = mkdtempSync(join(tmpdir(), 'fjord-acl-sync-'));
const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 500 };
/** Nodes that hold ACLs need an authorizer; the anonymous PLAINTEXT principal (and the node's own syncs) are super users. */
const AUTHORIZER = { 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:ANONYMOUS' };

beforeAll(async () => {
  [a, d, n, e, kafka] = await Promise.all([
    startNode({ overrides: { ...FAST, ...AUTHORIZER } }),
    startNode({ overrides: { ...FAST, ...AUTHORIZER } }),
    startNode({ overrides: FAST }),
    startNode({ overrides: { ...FAST, ...AUTHORIZER } }),
    startKafkaSource({ overrides: { 'authorizer.class.name': '' } }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.destroy(), d?.destroy(), n?.destroy(), e?.destroy(), kafka?.stop()]);
  rmSync(work, { recursive: true, force: true });
});

/** The cluster-mirrors tool against `node`; fails the test with its output when it exits non-zero. */
async function mirrorsCli(node: RunningNode, ...argv: string[]): Promise<void> {
  const out: string[] = [];
  const code = await runClusterMirrorsCli(['--bootstrap-server', node.bootstrap, ...argv], { out: (l) => out.push(l), err: (l) => out.push(l) });
  expect(code, out.join('\n')).toBe(0);
}

/** How many log lines of `node` contain `text`. */
function logCount(node: RunningNode, text: string): number {
  return node.logs().split('\n').filter((l) => l.includes(text)).length;
}

async function withAdmin<T>(node: RunningNode, f: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Kafka({ clientId: 'acl-sync', brokers: [node.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    return await f(admin);
  } finally {
    await admin.disconnect();
  }
}

const topicAcl = (name: string, principal: string, operation: AclOperationTypes) => ({
  resourceType: AclResourceTypes.TOPIC,
  resourceName: name,
  resourcePatternType: ResourcePatternTypes.LITERAL,
  principal,
  host: '*',
  operation,
  permissionType: AclPermissionTypes.ALLOW,
});

async function aclList(node: RunningNode): Promise<string[]> {
  return withAdmin(node, async (admin) => {
    const r = await admin.describeAcls({
      resourceType: AclResourceTypes.ANY,
      resourcePatternType: ResourcePatternTypes.ANY,
      operation: AclOperationTypes.ANY,
      permissionType: AclPermissionTypes.ANY,
    });
    return r.resources.flatMap((res) => res.acls.map((x) => `${res.resourceType}:${res.resourceName}:${x.principal}:${x.operation}`)).sort();
  });
}

describe('ACL sync between two Fjord nodes', () => {
  it('creates included source ACLs, deletes removed and destination-only ones, leaves excluded ones out', async () => {
    const T = AclResourceTypes.TOPIC;
    await withAdmin(a, async (admin) => {
      await admin.createTopics({ topics: [{ topic: 'orders-1', numPartitions: 1 }], waitForLeaders: true });
      await admin.createAcls({ acl: [topicAcl('orders-1', 'User:alice', AclOperationTypes.READ), topicAcl('orders-2', 'User:bob', AclOperationTypes.WRITE), topicAcl('secret', 'User:alice', AclOperationTypes.READ)] });
    });
    // An ACL only the destination has: the sync removes it.
    await withAdmin(d, (admin) => admin.createAcls({ acl: [topicAcl('local-only', 'User:carol', AclOperationTypes.READ)] }));
    expect(await aclList(d)).toEqual([`${T}:local-only:User:carol:${AclOperationTypes.READ}`]);

    const props = join(work, 'from-a.properties');
    writeFileSync(props, `bootstrap.servers=${a.bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.acls.include=TOPIC;orders-.*\n`);
    const out: string[] = [];
    const run = (...argv: string[]) => runClusterMirrorsCli(['--bootstrap-server', d.bootstrap, ...argv], { out: (l) => out.push(l), err: (l) => out.push(l) });
    expect(await run('--create', '--mirror', 'from-a', '--mirror-config', props), out.join('\n')).toBe(0);
    expect(await run('--start', '--mirror', 'from-a', '--topics', 'orders-1'), out.join('\n')).toBe(0);

    const expected = [`${T}:orders-1:User:alice:${AclOperationTypes.READ}`, `${T}:orders-2:User:bob:${AclOperationTypes.WRITE}`];
    await waitFor('included ACLs on the destination', async () => JSON.stringify(await aclList(d)) === JSON.stringify(expected));
    expect(await aclList(d)).toEqual(expected); // 'secret' is excluded, 'local-only' is gone

    // Deleted on the source → gone from the destination; a new one appears.
    await withAdmin(a, async (admin) => {
      await admin.deleteAcls({ filters: [{ ...topicAcl('orders-2', 'User:bob', AclOperationTypes.WRITE) }] });
      await admin.createAcls({ acl: [topicAcl('orders-3', 'User:dave', AclOperationTypes.DESCRIBE)] });
    });
    const expected2 = [`${T}:orders-1:User:alice:${AclOperationTypes.READ}`, `${T}:orders-3:User:dave:${AclOperationTypes.DESCRIBE}`];
    await waitFor('source changes on the destination', async () => JSON.stringify(await aclList(d)) === JSON.stringify(expected2));
    // The source itself is untouched by the sync.
    expect((await aclList(a)).length).toBe(3);
  });

  it('skips a round when the source has no authorizer (Apache Kafka answers SECURITY_DISABLED)', async () => {
    const source = new KafkaClient({ bootstrapServers: [kafka.bootstrap], clientId: 'acl-sync-test', requestTimeoutMs: 10_000 });
    const self = new KafkaClient({ bootstrapServers: [d.bootstrap], clientId: 'acl-sync-test', requestTimeoutMs: 10_000 });
    try {
      expect(await describeAllAcls(source)).toBeNull();
      const before = await aclList(d);
      expect(before.length).toBeGreaterThan(0);
      const r = await syncAcls('m', { mirrorConfigs: () => new Map([['m', new Map<string, string>()]]) }, source, self);
      expect(r).toEqual({ created: 0, deleted: 0, skipped: AclSyncSkip.SOURCE_SECURITY_DISABLED });
      expect(await aclList(d)).toEqual(before);
    } finally {
      source.close();
      self.close();
    }
  });

  it('skips a round when this node has no authorizer, and leaves the source alone', async () => {
    const source = new KafkaClient({ bootstrapServers: [a.bootstrap], clientId: 'acl-sync-test', requestTimeoutMs: 10_000 });
    const self = new KafkaClient({ bootstrapServers: [n.bootstrap], clientId: 'acl-sync-test', requestTimeoutMs: 10_000 });
    try {
      const before = await aclList(a);
      expect(before.length).toBeGreaterThan(0);
      expect(await describeAllAcls(self)).toBeNull();
      const r = await syncAcls('m', { mirrorConfigs: () => new Map([['m', new Map<string, string>()]]) }, source, self);
      expect(r).toEqual({ created: 0, deleted: 0, skipped: AclSyncSkip.DESTINATION_SECURITY_DISABLED });
      expect(await aclList(a)).toEqual(before);
    } finally {
      source.close();
      self.close();
    }
  });
});

describe('a source without an authorizer', () => {
  it('answers the ACL APIs with SECURITY_DISABLED (a Fjord node, as Apache Kafka)', async () => {
    await withAdmin(n, async (admin) => {
      await expect(admin.describeAcls({ resourceType: AclResourceTypes.ANY, resourcePatternType: ResourcePatternTypes.ANY, operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY })).rejects.toMatchObject({ type: 'SECURITY_DISABLED' });
      await expect(admin.createAcls({ acl: [topicAcl('orders-1', 'User:alice', AclOperationTypes.READ)] })).rejects.toMatchObject({ type: 'SECURITY_DISABLED' });
    });
  });

  it('leaves the destination ACLs as they are, Fjord and Apache Kafka alike, and says why once per mirror', async () => {
    const T = AclResourceTypes.TOPIC;
    await withAdmin(e, (admin) => admin.createAcls({ acl: [topicAcl('local-1', 'User:carol', AclOperationTypes.READ), topicAcl('local-2', 'User:dave', AclOperationTypes.WRITE)] }));
    const before = [`${T}:local-1:User:carol:${AclOperationTypes.READ}`, `${T}:local-2:User:dave:${AclOperationTypes.WRITE}`];
    expect(await aclList(e)).toEqual(before);
    await withAdmin(n, (admin) => admin.createTopics({ topics: [{ topic: 'late-0', numPartitions: 1 }], waitForLeaders: true }));

    // Both mirrors keep the default mirror.acls.include (*): a sync that took "no ACLs" for an
    // empty source would delete both ACLs at the first refresh.
    writeFileSync(join(work, 'from-n.properties'), `bootstrap.servers=${n.bootstrap}\nmirror.fetch.wait.max.ms=100\n`);
    writeFileSync(join(work, 'from-kafka.properties'), `bootstrap.servers=${kafka.bootstrap}\nmirror.fetch.wait.max.ms=100\n`);
    await mirrorsCli(e, '--create', '--mirror', 'from-n', '--mirror-config', join(work, 'from-n.properties'));
    await mirrorsCli(e, '--create', '--mirror', 'from-kafka', '--mirror-config', join(work, 'from-kafka.properties'));
    // A pattern, so that topics created on n later are discovered at a refresh.
    await mirrorsCli(e, '--start', '--mirror', 'from-n', '--topics', 'late-.*');

    const skipped = (mirror: string): string => `mirror ${mirror}: ACL sync skipped: the source has no authorizer`;
    const topicsOnE = (): Promise<string[]> => withAdmin(e, (admin) => admin.listTopics());
    // Until each mirror's first ACL round has run, or the ACLs here have changed.
    await waitFor('the first ACL rounds', async () => (logCount(e, skipped('from-n')) > 0 && logCount(e, skipped('from-kafka')) > 0) || JSON.stringify(await aclList(e)) !== JSON.stringify(before));
    expect(await aclList(e)).toEqual(before);

    // Two more refresh rounds, counted by the topics they discover on n: late-2 is found in a
    // round after the one that found late-1, which began after the first ACL rounds ended.
    for (const topic of ['late-1', 'late-2']) {
      await withAdmin(n, (admin) => admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true }));
      await waitFor(`${topic} discovered`, async () => (await topicsOnE()).includes(topic));
    }
    expect(await aclList(e)).toEqual(before);
    expect(logCount(e, skipped('from-n'))).toBe(1);
    expect(logCount(e, skipped('from-kafka'))).toBe(1);
    // Not a failed round either: nothing is retried or counted as an ACL sync error.
    expect(logCount(e, 'ACL sync failed')).toBe(0);
  });
});
