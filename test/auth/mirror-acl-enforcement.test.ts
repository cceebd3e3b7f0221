/**
 * ACLs synced from a mirror source (mirror.acls.include) are enforced on a destination whose
 * authorizer is on: the principal the source's ACLs name reads the mirrored topic over SASL, and
 * one they do not name is refused with TOPIC_AUTHORIZATION_FAILED.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, Kafka, logLevel, ResourcePatternTypes } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runClusterMirrorsCli } from '../../src/cli/cluster-mirrors.js';
import { startSecureNode, type SecureNode } from '../server/secure-node.js';
import { waitFor } from '../helpers/wait.js';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-pw" user_alice="alice-pw" user_bob="bob-pw";';
const KAFKAJS_ERRORS = (createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as { errorCodes: { type: string; message: string }[] }).errorCodes;

let source: SecureNode;
let dest: SecureNode;
const work = mkdtempSync(join(tmpdir(), 'fjord-mirror-acls-'));

beforeAll(async () => {
  // The source holds ACLs, so it has an authorizer too (without one it answers SECURITY_DISABLED);
  // its anonymous PLAINTEXT principal is a super user.
  source = await startSecureNode({
    listeners: 'PLAINTEXT://127.0.0.1:0',
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'super.users': 'User:ANONYMOUS',
    'mirror.metadata.refresh.interval.ms': '500',
  });
  dest = await startSecureNode({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT',
    'inter.broker.listener.name': 'PLAINTEXT',
    'sasl.enabled.mechanisms': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    // The node's own sync calls come in on the PLAINTEXT inter-broker listener.
    'super.users': 'User:ANONYMOUS',
    'mirror.metadata.refresh.interval.ms': '500',
  });
});

afterAll(async () => {
  await dest?.close();
  await source?.close();
  rmSync(work, { recursive: true, force: true });
});

const allow = (resourceType: AclResourceTypes, resourceName: string, operation: AclOperationTypes) => ({
  resourceType,
  resourceName,
  resourcePatternType: ResourcePatternTypes.LITERAL,
  principal: 'User:alice',
  host: '*',
  operation,
  permissionType: AclPermissionTypes.ALLOW,
});

async function aclCount(node: SecureNode): Promise<number> {
  const admin = new Kafka({ clientId: 'acl-count', brokers: [`127.0.0.1:${node.port('PLAINTEXT')}`], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const r = await admin.describeAcls({ resourceType: AclResourceTypes.ANY, resourcePatternType: ResourcePatternTypes.ANY, operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY });
    return r.resources.reduce((n, res) => n + res.acls.length, 0);
  } finally {
    await admin.disconnect();
  }
}

/** Reads one record of `orders` on the destination as `user`; the Kafka error name otherwise. */
async function readOne(user: string): Promise<string> {
  const kafka = new Kafka({ clientId: `reader-${user}`, brokers: [`127.0.0.1:${dest.port('SASL_PLAINTEXT')}`], sasl: { mechanism: 'plain', username: user, password: `${user}-pw` }, logLevel: logLevel.NOTHING, retry: { retries: 0 } });
  const c = kafka.consumer({ groupId: 'readers', retry: { retries: 0 } });
  await c.connect();
  const typeOf = (e: unknown): string => {
    const err = e as { type?: string; message?: string };
    return err.type ?? KAFKAJS_ERRORS.find((x) => x.message === err.message)?.type ?? String(err.message);
  };
  try {
    return await new Promise<string>((resolve) => {
      c.on(c.events.CRASH, (e) => resolve(typeOf(e.payload.error)));
      void c.subscribe({ topic: 'orders', fromBeginning: true }).then(
        () => c.run({ eachMessage: async ({ message }) => resolve(String(message.value)) }),
        (e: unknown) => resolve(typeOf(e)),
      );
    });
  } finally {
    await c.disconnect();
  }
}

describe('ACLs synced from a mirror source', () => {
  it('are enforced on the destination', async () => {
    const admin = new Kafka({ clientId: 'source-admin', brokers: [`127.0.0.1:${source.port('PLAINTEXT')}`], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 1 }], waitForLeaders: true });
      await admin.createAcls({ acl: [allow(AclResourceTypes.TOPIC, 'orders', AclOperationTypes.READ), allow(AclResourceTypes.GROUP, 'readers', AclOperationTypes.READ)] });
    } finally {
      await admin.disconnect();
    }
    const producer = new Kafka({ clientId: 'source-producer', brokers: [`127.0.0.1:${source.port('PLAINTEXT')}`], logLevel: logLevel.NOTHING }).producer();
    await producer.connect();
    await producer.send({ topic: 'orders', acks: -1, messages: [{ value: 'order-1' }] });
    await producer.disconnect();

    const props = join(work, 'from-source.properties');
    writeFileSync(props, `bootstrap.servers=127.0.0.1:${source.port('PLAINTEXT')}\nmirror.fetch.wait.max.ms=100\nmirror.acls.include=TOPIC;orders,GROUP;readers\n`);
    const out: string[] = [];
    const run = (...argv: string[]): Promise<number> => runClusterMirrorsCli(['--bootstrap-server', `127.0.0.1:${dest.port('PLAINTEXT')}`, ...argv], { out: (l) => out.push(l), err: (l) => out.push(l) });
    expect(await run('--create', '--mirror', 'from-source', '--mirror-config', props), out.join('\n')).toBe(0);
    expect(await run('--start', '--mirror', 'from-source', '--topics', 'orders'), out.join('\n')).toBe(0);

    await waitFor('the two mirrored ACLs on the destination', async () => (await aclCount(dest)) >= 2, 30_000, 200);
    expect(await aclCount(dest)).toBe(2);

    expect(await readOne('alice')).toBe('order-1');
    expect(await readOne('bob')).toBe('TOPIC_AUTHORIZATION_FAILED');
  });
});
