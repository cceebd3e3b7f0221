/**
 * ACL sync (spec §10.3) between two Fjord node processes: ACLs created on the source appear on
 * the destination after a metadata refresh, deleted ones vanish, ones no `mirror.acls.include`
 * rule matches never cross, and destination-only ACLs are removed. Plus the rule parser.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, Kafka, logLevel, ResourcePatternTypes, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { describeAllAcls, parseAclRule, syncAcls, type MirrorAclBinding } from '../../src/mirror/acl-sync.js';
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

let a: RunningNode;
let d: RunningNode;
let kafka: KafkaBroker;
const work = mkdtempSync(join(tmpdir(), 'fjord-acl-sync-'));
const FAST = { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 500 };
/** Nodes that hold ACLs need an authorizer; the anonymous PLAINTEXT principal (and the node's own syncs) are super users. */
const AUTHORIZER = { 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:ANONYMOUS' };

beforeAll(async () => {
  [a, d, kafka] = await Promise.all([startNode({ overrides: { ...FAST, ...AUTHORIZER } }), startNode({ overrides: { ...FAST, ...AUTHORIZER } }), startKafkaSource({ overrides: { 'authorizer.class.name': '' } })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.destroy(), d?.destroy(), kafka?.stop()]);
  rmSync(work, { recursive: true, force: true });
});

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

  it('skips silently when the source has no authorizer (Apache Kafka answers SECURITY_DISABLED)', async () => {
    const source = new KafkaClient({ bootstrapServers: [kafka.bootstrap], clientId: 'acl-sync-test', requestTimeoutMs: 10_000 });
    const self = new KafkaClient({ bootstrapServers: [d.bootstrap], clientId: 'acl-sync-test', requestTimeoutMs: 10_000 });
    try {
      expect(await describeAllAcls(source)).toBeNull();
      const before = await aclList(d);
      expect(before.length).toBeGreaterThan(0);
      const r = await syncAcls('m', { mirrorConfigs: () => new Map([['m', new Map<string, string>()]]) }, source, self);
      expect(r).toEqual({ created: 0, deleted: 0, skipped: true });
      expect(await aclList(d)).toEqual(before);
    } finally {
      source.close();
      self.close();
    }
  });
});
