/**
 * Two behaviours of the KIP's own system tests with Apache Kafka as the source (one broker,
 * StandardAuthorizer, started by the interop harness's launcher) and a Fjord node process with an
 * authorizer as the destination, driven through `fjord cluster-mirrors` and kafkajs:
 *
 *  - a read_committed consumer on the destination, running across a stop (failover) taken while
 *    transactions are open on the source, keeps making progress (the stop aborts the open
 *    transactions, so the last stable offset moves on) and never sees an aborted record, nor one
 *    of a transaction the source commits only after the stop; stopped while transactions keep
 *    being written, every transaction reads whole or not at all on each partition, in order;
 *  - ACL sync from a source that has StandardAuthorizer: literal, prefixed and wildcard
 *    resources, DENY entries and host-specific ones, on topics, groups, the cluster and
 *    transactional ids arrive as the source has them, ACLs no `mirror.acls.include` rule matches
 *    never do, destination-only ACLs are removed except those on CLUSTER_MIRROR resources, and
 *    changes on the source follow.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, Kafka, logLevel, ResourcePatternTypes, type Admin, type Consumer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Apis } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { clusterMirrors, type CliRun } from '../helpers/mirror-cli.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';
import { startKafkaSource, type KafkaBroker } from './helpers/kafka-source.js';

const MIRROR = 'from-kafka';
/** The anonymous PLAINTEXT principal (and the node's own syncs) are super users; everything else needs ACLs. */
const AUTHORIZER = { 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:ANONYMOUS' };
/**
 * What crosses: topics named orders…, the wildcard topic, every group, cluster,
 * transactional-id, delegation-token and user ACL. Topic ACLs on other names (secret, rc-ledger) stay on the source.
 */
const ACL_RULES = 'TOPIC;orders.*,TOPIC;\\*,GROUP,CLUSTER,TRANSACTIONAL_ID,DELEGATION_TOKEN,USER';

let kafka: KafkaBroker;
let fjord: RunningNode;
let source: Kafka;
let dest: Kafka;
let srcAdmin: Admin;
let dstAdmin: Admin;
const work = mkdtempSync(join(tmpdir(), 'fjord-system-kafka-'));

beforeAll(async () => {
  [kafka, fjord] = await Promise.all([
    startKafkaSource(),
    startNode({ overrides: { ...AUTHORIZER, 'mirror.metadata.refresh.interval.ms': 500, 'mirror.failed.retry.initial.backoff.ms': 200 } }),
  ]);
  source = new Kafka({ clientId: 'system-src', brokers: [kafka.bootstrap], logLevel: logLevel.NOTHING });
  dest = new Kafka({ clientId: 'system-dst', brokers: [fjord.bootstrap], logLevel: logLevel.NOTHING });
  srcAdmin = source.admin();
  dstAdmin = dest.admin();
  await Promise.all([srcAdmin.connect(), dstAdmin.connect()]);
  const props = join(work, `${MIRROR}.properties`);
  writeFileSync(props, `bootstrap.servers=${kafka.bootstrap}\nmirror.fetch.wait.max.ms=100\nmirror.acls.include=${ACL_RULES}\n`);
  await ok('--create', '--mirror', MIRROR, '--mirror-config', props);
}, 120_000);

afterAll(async () => {
  await Promise.all([srcAdmin?.disconnect(), dstAdmin?.disconnect()]);
  await Promise.all([kafka?.stop(), fjord?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

async function ok(...argv: string[]): Promise<CliRun> {
  const r = await clusterMirrors(fjord.bootstrap, ...argv);
  expect(r.code, `${argv.join(' ')}: ${r.out}\n${r.err}`).toBe(0);
  return r;
}

async function rows(topic: string): Promise<{ partition: number; state: string; lag: number }[]> {
  const r = await clusterMirrors(fjord.bootstrap, '--describe', '--mirror', MIRROR, '--json');
  if (r.code !== 0) throw new Error(r.err);
  return (JSON.parse(r.out) as { topic: string; partition: number; state: string; lag: number }[]).filter((p) => p.topic === topic);
}

describe('a read_committed consumer across a stop with open transactions', () => {
  const topic = 'rc-ledger';
  const PARTITIONS = 2;

  /** One transaction of `perPartition` records on each partition, committed or aborted. */
  async function transaction(producer: ReturnType<Kafka['producer']>, prefix: string, perPartition: number, commit: boolean, to = topic): Promise<string[]> {
    const txn = await producer.transaction();
    const values: string[] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      const messages = Array.from({ length: perPartition }, (_, i) => ({ partition: p, value: `${prefix}-p${p}-${i}` }));
      values.push(...messages.map((m) => m.value));
      await txn.send({ topic: to, acks: -1, messages });
    }
    if (commit) await txn.commit();
    else await txn.abort();
    return values;
  }

  it('keeps consuming through the stop and never sees an aborted record', async () => {
    await srcAdmin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
    const producerOf = (transactionalId: string) => source.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    const writer = producerOf('rc-writer');
    const open = producerOf('rc-open');
    await Promise.all([writer.connect(), open.connect()]);
    const consumed: { partition: number; offset: number; value: string }[] = [];
    let consumer: Consumer | undefined;
    try {
      // Committed and aborted transactions, interleaved, before and while the mirror copies.
      const committed: string[] = [];
      const aborted: string[] = [];
      for (let i = 0; i < 6; i++) (i % 3 === 2 ? aborted : committed).push(...(await transaction(writer, i % 3 === 2 ? `aborted-${i}` : `committed-${i}`, 3, i % 3 !== 2)));
      await ok('--start', '--mirror', MIRROR, '--topics', topic);

      consumer = dest.consumer({ groupId: 'rc-reader', readUncommitted: false, maxWaitTimeInMs: 100 });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ partition, message }) => void consumed.push({ partition, offset: Number(message.offset), value: message.value?.toString() ?? '' }) });
      for (let i = 6; i < 12; i++) (i % 3 === 2 ? aborted : committed).push(...(await transaction(writer, i % 3 === 2 ? `aborted-${i}` : `committed-${i}`, 3, i % 3 !== 2)));
      await waitFor('the committed transactions consumed', () => consumed.length === committed.length);

      // A transaction opened on the source and left open, then two committed after it: the
      // open one pins the last stable offset, so the consumer cannot read the later ones yet.
      const openTxn = await open.transaction();
      const openValues: string[] = [];
      for (let p = 0; p < PARTITIONS; p++) {
        const messages = Array.from({ length: 2 }, (_, i) => ({ partition: p, value: `open-p${p}-${i}` }));
        openValues.push(...messages.map((m) => m.value));
        await openTxn.send({ topic, acks: -1, messages });
      }
      const late = [...(await transaction(writer, 'late-0', 2, true)), ...(await transaction(writer, 'late-1', 2, true))];
      const sourceEnds = (await srcAdmin.fetchTopicOffsets(topic)).map((p) => p.high).sort();
      await waitFor('everything copied', async () => JSON.stringify((await dstAdmin.fetchTopicOffsets(topic)).map((p) => p.high).sort()) === JSON.stringify(sourceEnds));
      expect((await rows(topic)).map((r) => r.state)).toEqual(['MIRRORING', 'MIRRORING']);
      const dryRun = await ok('--stop', '--mirror', MIRROR, '--topics', topic, '--dry-run');
      expect(dryRun.out.match(/would abort the open transaction of producer/g)?.length).toBe(PARTITIONS);
      expect(consumed.length).toBe(committed.length);

      // Failover with the transaction open: the stop aborts it here, and the consumer moves on.
      await ok('--stop', '--mirror', MIRROR, '--topics', topic);
      await waitFor('stopped', async () => JSON.stringify((await rows(topic)).map((r) => r.state)) === JSON.stringify(['STOPPED', 'STOPPED']));
      await waitFor('the later committed transactions consumed', () => consumed.length === committed.length + late.length);

      // The source commits its transaction after the failover: it stays aborted here.
      await openTxn.commit();
      // Writes here, after the stop, transactional and not, reach the same consumer.
      const local = dest.producer({ transactionalId: 'rc-local', idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      await local.connect();
      let after: string[];
      try {
        const txn = await local.transaction();
        after = [0, 1].map((p) => `after-stop-p${p}`);
        await txn.send({ topic, acks: -1, messages: after.map((value, p) => ({ partition: p, value })) });
        await txn.commit();
        const plain = dest.producer({ allowAutoTopicCreation: false });
        await plain.connect();
        await plain.send({ topic, acks: -1, messages: [{ partition: 0, value: 'after-stop-plain' }] });
        await plain.disconnect();
        after.push('after-stop-plain');
      } finally {
        await local.disconnect();
      }
      const expected = [...committed, ...late, ...after].sort();
      await waitFor('the writes after the stop consumed', () => consumed.length === expected.length);
      expect(consumed.map((c) => c.value).sort()).toEqual(expected);
      expect(consumed.filter((c) => c.value.startsWith('aborted-') || c.value.startsWith('open-'))).toEqual([]);
      for (let p = 0; p < PARTITIONS; p++) {
        const offsets = consumed.filter((c) => c.partition === p).map((c) => c.offset);
        expect(offsets).toEqual([...offsets].sort((x, y) => x - y));
      }

      // The open transaction's records are in the log here (a read_uncommitted reader sees
      // them); read_committed, a new consumer reads exactly what the first one did.
      const readAll = async (readUncommitted: boolean): Promise<string[]> => {
        const seen: string[] = [];
        const c = dest.consumer({ groupId: `rc-check-${readUncommitted}`, readUncommitted, maxWaitTimeInMs: 100 });
        await c.connect();
        try {
          await c.subscribe({ topic, fromBeginning: true });
          await c.run({ eachMessage: async ({ message }) => void seen.push(message.value?.toString() ?? '') });
          const total = expected.length + (readUncommitted ? aborted.length + openValues.length : 0);
          await waitFor(`${readUncommitted ? 'read_uncommitted' : 'read_committed'} reader done`, () => seen.length >= total);
        } finally {
          await c.disconnect();
        }
        return seen.sort();
      };
      expect(await readAll(false)).toEqual(expected);
      expect(await readAll(true)).toEqual([...expected, ...aborted, ...openValues].sort());
    } finally {
      await consumer?.disconnect();
      await Promise.all([writer.disconnect(), open.disconnect()]);
    }
  }, 120_000);

  it('stopped while transactions are being written: per partition, every transaction reads whole or not at all, never aborted, and the consumer moves on', async () => {
    const live = 'rc-live';
    await srcAdmin.createTopics({ topics: [{ topic: live, numPartitions: PARTITIONS }], waitForLeaders: true });
    const writer = source.producer({ transactionalId: 'rc-live-writer', idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    await writer.connect();
    await ok('--start', '--mirror', MIRROR, '--topics', live);
    const seen: { partition: number; value: string }[] = [];
    const consumer = dest.consumer({ groupId: 'rc-live-reader', readUncommitted: false, maxWaitTimeInMs: 100 });
    let writing = true;
    let written = 0;
    // Transactions go on being written on the source, before, during and after the stop.
    const writes = (async () => {
      for (let i = 0; writing; i++, written++) await transaction(writer, i % 3 === 2 ? `aborted-${i}` : `committed-${i}`, 3, i % 3 !== 2, live);
    })();
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: live, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ partition, message }) => void seen.push({ partition, value: message.value?.toString() ?? '' }) });
      await waitFor('some transactions consumed', () => seen.length >= 30);
      await ok('--stop', '--mirror', MIRROR, '--topics', live);
      await waitFor('stopped', async () => JSON.stringify((await rows(live)).map((r) => r.state)) === JSON.stringify(['STOPPED', 'STOPPED']));
      const atStop = written;
      await waitFor('more transactions written on the source after the stop', () => written >= atStop + 3);
    } finally {
      writing = false;
      await writes;
      await writer.disconnect();
    }
    const local = dest.producer({ allowAutoTopicCreation: false });
    await local.connect();
    await local.send({ topic: live, acks: -1, messages: [0, 1].map((p) => ({ partition: p, value: `after-stop-p${p}` })) });
    await local.disconnect();
    await waitFor('the writes after the stop consumed', () => seen.filter((s) => s.value.startsWith('after-stop-')).length === PARTITIONS);
    await consumer.disconnect();

    expect(seen.filter((s) => !s.value.startsWith('committed-') && !s.value.startsWith('after-stop-'))).toEqual([]);
    for (let p = 0; p < PARTITIONS; p++) {
      const mine = seen.filter((s) => s.partition === p).map((s) => s.value);
      expect(mine.at(-1)).toBe(`after-stop-p${p}`);
      // Whole transactions, in the order written, with no committed one missing before the last one shown.
      const txns = mine.slice(0, -1).map((v) => Number(/^committed-(\d+)-/.exec(v)![1]));
      const whole = [...new Set(txns)];
      for (const t of whole) expect(mine.filter((v) => v.startsWith(`committed-${t}-p${p}-`))).toEqual([0, 1, 2].map((k) => `committed-${t}-p${p}-${k}`));
      const last = whole.at(-1)!;
      expect(whole).toEqual(Array.from({ length: last + 1 }, (_, i) => i).filter((i) => i % 3 !== 2));
    }
  }, 120_000);
});

describe('ACL sync from Apache Kafka with StandardAuthorizer', () => {
  const acl = (resourceType: AclResourceTypes, resourceName: string, patternType: ResourcePatternTypes, principal: string, operation: AclOperationTypes, permissionType = AclPermissionTypes.ALLOW, host = '*') => ({
    resourceType,
    resourceName,
    resourcePatternType: patternType,
    principal,
    host,
    operation,
    permissionType,
  });
  const { TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID } = AclResourceTypes;
  const { LITERAL, PREFIXED } = ResourcePatternTypes;
  const DELEGATION_TOKEN = 6 as AclResourceTypes;
  const USER = 7 as AclResourceTypes; // kafkajs names no USER type; the number is Kafka's ResourceType.USER
  const CLUSTER_MIRROR = 8 as AclResourceTypes;

  /** Every ACL of a cluster, one line each, sorted. */
  async function aclList(admin: Admin): Promise<string[]> {
    const r = await admin.describeAcls({ resourceType: AclResourceTypes.ANY, resourcePatternType: ResourcePatternTypes.ANY, operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY });
    return r.resources.flatMap((res) => res.acls.map((x) => [res.resourceType, res.resourceName, res.resourcePatternType, x.principal, x.host, x.operation, x.permissionType].join(':'))).sort();
  }
  const line = (a: ReturnType<typeof acl>): string => [a.resourceType, a.resourceName, a.resourcePatternType, a.principal, a.host, a.operation, a.permissionType].join(':');

  /** ACLs of resource types kafkajs refuses to send (USER, CLUSTER_MIRROR): through CreateAcls directly. */
  async function createAclsRaw(bootstrap: string, bindings: ReturnType<typeof acl>[]): Promise<void> {
    const client = new KafkaClient({ bootstrapServers: [bootstrap], clientId: 'system-acls' });
    try {
      const res = await client.send(Apis.CreateAcls, { creations: bindings.map(({ resourcePatternType, ...b }) => ({ ...b, resourcePatternType })) });
      expect(res.results.map((r) => r.errorCode)).toEqual(bindings.map(() => ErrorCode.NONE));
    } finally {
      client.close();
    }
  }

  it('copies the included ACLs as the source has them, removes the rest here but CLUSTER_MIRROR ones, and follows changes', async () => {
    const synced = [
      acl(TOPIC, 'orders', LITERAL, 'User:alice', AclOperationTypes.READ),
      acl(TOPIC, 'orders-', PREFIXED, 'User:bob', AclOperationTypes.WRITE),
      acl(TOPIC, 'orders-audit', LITERAL, 'User:bob', AclOperationTypes.WRITE, AclPermissionTypes.DENY, '10.0.0.7'),
      acl(TOPIC, '*', LITERAL, 'User:monitor', AclOperationTypes.DESCRIBE),
      acl(GROUP, 'billing-', PREFIXED, 'User:alice', AclOperationTypes.READ),
      acl(GROUP, '*', LITERAL, 'User:eve', AclOperationTypes.ALL, AclPermissionTypes.DENY),
      acl(CLUSTER, 'kafka-cluster', LITERAL, 'User:ops', AclOperationTypes.ALTER_CONFIGS),
      acl(CLUSTER, 'kafka-cluster', LITERAL, 'User:bob', AclOperationTypes.IDEMPOTENT_WRITE),
      acl(TRANSACTIONAL_ID, 'tx-', PREFIXED, 'User:bob', AclOperationTypes.WRITE),
      acl(GROUP, 'analytics', LITERAL, 'Group:ops', AclOperationTypes.READ), // a principal type of its own
      acl(DELEGATION_TOKEN, 'token-', PREFIXED, 'User:bob', AclOperationTypes.DESCRIBE),
    ];
    const userAcl = acl(USER, 'User:alice', LITERAL, 'User:admin', 13 as AclOperationTypes) // CREATE_TOKENS, which kafkajs does not name;
    const kept = [acl(TOPIC, 'secret', LITERAL, 'User:eve', AclOperationTypes.READ), acl(TOPIC, 'rc-', PREFIXED, 'User:carol', AclOperationTypes.READ)];
    await srcAdmin.createAcls({ acl: [...synced, ...kept] });
    await createAclsRaw(kafka.bootstrap, [userAcl]);
    synced.push(userAcl);
    // Kafka answers CreateAcls before its metadata publishes them to DescribeAcls.
    const onSource = JSON.stringify([...synced, ...kept].map(line).sort());
    await waitFor('the ACLs on the source', async () => JSON.stringify(await aclList(srcAdmin)) === onSource);

    // Here: one ACL only this cluster has, which the sync removes, and one on the mirror itself, which it keeps.
    const localOnly = acl(TOPIC, 'orders', LITERAL, 'User:carol', AclOperationTypes.READ);
    await dstAdmin.createAcls({ acl: [localOnly] });
    const onMirror = acl(CLUSTER_MIRROR, MIRROR, LITERAL, 'User:mirror-admin', AclOperationTypes.ALTER);
    await createAclsRaw(fjord.bootstrap, [onMirror]);
    const mirrorAcl = line(onMirror);

    const want1 = [...synced.map(line), mirrorAcl].sort();
    await waitFor('the included ACLs here', async () => JSON.stringify(await aclList(dstAdmin)) === JSON.stringify(want1));

    // Changes on the source follow: one deleted, one added, one that no rule matches added.
    await srcAdmin.deleteAcls({ filters: [acl(TOPIC, 'orders-', PREFIXED, 'User:bob', AclOperationTypes.WRITE)] });
    const added = acl(TOPIC, 'orders-eu', PREFIXED, 'User:dave', AclOperationTypes.CREATE);
    await srcAdmin.createAcls({ acl: [added, acl(TOPIC, 'payments', LITERAL, 'User:dave', AclOperationTypes.READ)] });
    const want2 = [...synced.filter((a) => !(a.resourceName === 'orders-' && a.resourceType === TOPIC)).map(line), line(added), mirrorAcl].sort();
    await waitFor('the source changes here', async () => JSON.stringify(await aclList(dstAdmin)) === JSON.stringify(want2));
    // The source is left as it was.
    expect((await aclList(srcAdmin)).length).toBe(synced.length + kept.length + 1);
  }, 120_000);
});
