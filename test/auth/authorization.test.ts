/**
 * ACL enforcement with `authorizer.class.name` set to Kafka's StandardAuthorizer, over SASL PLAIN
 * with kafkajs: a principal without the ACLs cannot produce, fetch, see or create topics, join a
 * group or call WriteMirrorStates, each with the exact Kafka error code; after Apache Kafka's own
 * kafka-acls tool (AclCommand) adds the ACLs it can. A super user needs no ACL, and
 * `allow.everyone.if.no.acl.found` opens only resources that have no ACL at all.
 */
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeShareGroupHeartbeatRequest } from '../../src/protocol/generated/messages/share-group-heartbeat-request.js';
import { decodeShareGroupHeartbeatResponse } from '../../src/protocol/generated/messages/share-group-heartbeat-response.js';
import { encodeStreamsGroupDescribeRequest } from '../../src/protocol/generated/messages/streams-group-describe-request.js';
import { decodeStreamsGroupDescribeResponse } from '../../src/protocol/generated/messages/streams-group-describe-response.js';
import { encodeStreamsGroupHeartbeatRequest } from '../../src/protocol/generated/messages/streams-group-heartbeat-request.js';
import { decodeStreamsGroupHeartbeatResponse } from '../../src/protocol/generated/messages/streams-group-heartbeat-response.js';
import { encodeShareFetchRequest } from '../../src/protocol/generated/messages/share-fetch-request.js';
import { decodeShareFetchResponse } from '../../src/protocol/generated/messages/share-fetch-response.js';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFetchRequest } from '../../src/protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse, type FetchResponse } from '../../src/protocol/generated/messages/fetch-response.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { encodeOffsetFetchRequest, type OffsetFetchRequestInput } from '../../src/protocol/generated/messages/offset-fetch-request.js';
import { decodeOffsetFetchResponse } from '../../src/protocol/generated/messages/offset-fetch-response.js';
import { encodeWriteMirrorStatesRequest } from '../../src/protocol/generated/messages/write-mirror-states-request.js';
import { decodeWriteMirrorStatesResponse } from '../../src/protocol/generated/messages/write-mirror-states-response.js';
import { javaTool, mustSucceed } from '../interop/lib/java.js';
import { startSecureNode, type SecureNode } from '../server/secure-node.js';
import { SaslWire, plainToken } from './sasl-helpers.js';

const JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-pw" user_admin="admin-pw" user_alice="alice-pw" user_bob="bob-pw";';
const CLUSTER_AUTHORIZATION_FAILED = 31;

function secured(extra: Record<string, string>): Promise<SecureNode> {
  return startSecureNode({
    listeners: 'SASL_PLAINTEXT://127.0.0.1:0',
    'listener.security.protocol.map': 'SASL_PLAINTEXT:SASL_PLAINTEXT',
    'inter.broker.listener.name': 'SASL_PLAINTEXT',
    'sasl.enabled.mechanisms': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'super.users': 'User:admin',
    'auto.create.topics.enable': 'false',
    ...extra,
  });
}

function kafka(node: SecureNode, user: string): Kafka {
  return new Kafka({
    clientId: `authz-${user}`,
    brokers: [`127.0.0.1:${node.port('SASL_PLAINTEXT')}`],
    sasl: { mechanism: 'plain', username: user, password: `${user}-pw` },
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  });
}

/** kafkajs's own table of Kafka errors: its retry wrapper keeps only the message of the error. */
const KAFKAJS_ERRORS = (createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as { errorCodes: { type: string; message: string }[] }).errorCodes;

/** The Kafka error name of a kafkajs error, which wraps some protocol errors in one of its own. */
function errorType(e: unknown): string {
  const err = e as { type?: string; cause?: { type?: string }; originalError?: { type?: string }; errors?: { type?: string }[]; message?: string };
  const type = err.type ?? err.cause?.type ?? err.originalError?.type ?? err.errors?.[0]?.type;
  return type ?? KAFKAJS_ERRORS.find((c) => c.message === err.message)?.type ?? String(err.message);
}

/** The Kafka error name kafkajs reports for a failed call, or 'ok'. */
async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return errorType(e);
  }
}

async function produce(node: SecureNode, user: string, topic: string): Promise<string> {
  const p = kafka(node, user).producer({ allowAutoTopicCreation: false });
  await p.connect();
  try {
    return await outcome(p.send({ topic, acks: -1, messages: [{ key: 'k', value: `from-${user}` }] }));
  } finally {
    await p.disconnect();
  }
}

/** Joins `group` and reads one record of `topic`; the crash's Kafka error name when it cannot. */
async function consumeOne(node: SecureNode, user: string, group: string, topic: string): Promise<string> {
  const c: Consumer = kafka(node, user).consumer({ groupId: group, retry: { retries: 0 }, sessionTimeout: 10_000 });
  await c.connect();
  try {
    const result = new Promise<string>((resolve) => {
      c.on(c.events.CRASH, (e) => resolve(errorType(e.payload.error)));
      void c.subscribe({ topic, fromBeginning: true }).then(
        () => c.run({ eachMessage: async () => resolve('ok') }),
        (err: unknown) => resolve(errorType(err)),
      );
    });
    return await result;
  } finally {
    await c.disconnect();
  }
}

/** WriteMirrorStates v0 over an authenticated raw connection: the top-level error code. */
async function writeMirrorStates(node: SecureNode, user: string): Promise<number> {
  const s = await SaslWire.connect(node.port('SASL_PLAINTEXT'));
  try {
    expect((await s.handshake('PLAIN')).errorCode).toBe(0);
    expect((await s.authenticate(plainToken(user, `${user}-pw`))).errorCode).toBe(0);
    const r = await s.wire.call(101, 0, (w) => encodeWriteMirrorStatesRequest(w, { mirrorName: 'm1', topics: [] }, 0));
    return decodeWriteMirrorStatesResponse(r, 0).errorCode;
  } finally {
    s.wire.close();
  }
}

/** ShareGroupHeartbeat and ShareFetch of `user`: their top-level error codes (KIP-932 needs READ on the group). */
async function shareGroupCalls(node: SecureNode, user: string): Promise<[number, number]> {
  const s = await SaslWire.connect(node.port('SASL_PLAINTEXT'));
  try {
    expect((await s.handshake('PLAIN')).errorCode).toBe(0);
    expect((await s.authenticate(plainToken(user, `${user}-pw`))).errorCode).toBe(0);
    const hb = decodeShareGroupHeartbeatResponse(await s.wire.call(76, 1, (w) => encodeShareGroupHeartbeatRequest(w, { groupId: 'sg', memberId: 'm', memberEpoch: 0, subscribedTopicNames: ['orders'] }, 1)), 1);
    const sf = decodeShareFetchResponse(await s.wire.call(78, 1, (w) => encodeShareFetchRequest(w, { groupId: 'sg', memberId: 'm', shareSessionEpoch: 0, maxWaitMs: 0, minBytes: 1, maxRecords: 10, batchSize: 10, topics: [] }, 1)), 1);
    return [hb.errorCode, sf.errorCode];
  } finally {
    s.wire.close();
  }
}

/** A streams group join naming `source` in its topology, and a describe of the group: their codes. */
async function streamsGroupCalls(node: SecureNode, user: string, group: string, source: string): Promise<[number, number]> {
  const s = await SaslWire.connect(node.port('SASL_PLAINTEXT'));
  try {
    expect((await s.handshake('PLAIN')).errorCode).toBe(0);
    expect((await s.authenticate(plainToken(user, `${user}-pw`))).errorCode).toBe(0);
    const topology = { epoch: 0, subtopologies: [{ subtopologyId: '0', sourceTopics: [source], sourceTopicRegex: [], stateChangelogTopics: [], repartitionSinkTopics: [], repartitionSourceTopics: [], copartitionGroups: [] }] };
    const hb = decodeStreamsGroupHeartbeatResponse(
      await s.wire.call(88, 0, (w) => encodeStreamsGroupHeartbeatRequest(w, { groupId: group, memberId: 'm', memberEpoch: 0, rebalanceTimeoutMs: 30_000, topology, activeTasks: [], standbyTasks: [], warmupTasks: [], processId: 'p' }, 0)),
      0,
    );
    const d = decodeStreamsGroupDescribeResponse(await s.wire.call(89, 0, (w) => encodeStreamsGroupDescribeRequest(w, { groupIds: [group], includeAuthorizedOperations: false }, 0)), 0);
    return [hb.errorCode, d.groups[0]!.errorCode];
  } finally {
    s.wire.close();
  }
}

describe('StandardAuthorizer with super.users', () => {
  let node: SecureNode;
  let commandConfig: string;

  /** kafka-acls (org.apache.kafka.tools.AclCommand) as the super user. */
  async function kafkaAcls(...args: string[]): Promise<string> {
    const bootstrap = `127.0.0.1:${node.port('SASL_PLAINTEXT')}`;
    const r = await javaTool('org.apache.kafka.tools.AclCommand', ['--bootstrap-server', bootstrap, '--command-config', commandConfig, ...args]);
    return mustSucceed(`kafka-acls ${args.join(' ')}`, r).stdout;
  }

  beforeAll(async () => {
    node = await secured({});
    commandConfig = join(node.node.ctx.config.logDirs[0]!, 'admin.properties');
    writeFileSync(
      commandConfig,
      [
        'security.protocol=SASL_PLAINTEXT',
        'sasl.mechanism=PLAIN',
        'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-pw";',
      ].join('\n'),
    );
    const admin = kafka(node, 'admin').admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 1 }, { topic: 'payments', numPartitions: 1 }] });
    await admin.disconnect();
    // The super user needs no ACL to write.
    expect(await produce(node, 'admin', 'orders')).toBe('ok');
  });

  afterAll(async () => {
    await node?.close();
  });

  it('refuses a principal without ACLs with the exact Kafka error codes', async () => {
    expect(await produce(node, 'alice', 'orders')).toBe('TOPIC_AUTHORIZATION_FAILED');
    const admin = kafka(node, 'alice').admin();
    await admin.connect();
    try {
      expect(await admin.listTopics()).toEqual([]);
      expect(await outcome(admin.createTopics({ topics: [{ topic: 'alice-new', numPartitions: 1 }] }))).toBe('TOPIC_AUTHORIZATION_FAILED');
    } finally {
      await admin.disconnect();
    }
    expect(await writeMirrorStates(node, 'alice')).toBe(CLUSTER_AUTHORIZATION_FAILED);
    expect(await shareGroupCalls(node, 'alice')).toEqual([ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.GROUP_AUTHORIZATION_FAILED]);
    expect(await streamsGroupCalls(node, 'alice', 'st', 'orders')).toEqual([ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.GROUP_AUTHORIZATION_FAILED]);
  });

  it('refuses a fetch without READ on the topic, and a named topic without DESCRIBE', async () => {
    // bob may describe payments and join g2, but not read payments.
    await kafkaAcls('--add', '--allow-principal', 'User:bob', '--operation', 'Describe', '--topic', 'payments');
    await kafkaAcls('--add', '--allow-principal', 'User:bob', '--operation', 'Read', '--group', 'g2');
    expect(await consumeOne(node, 'bob', 'g2', 'payments')).toBe('TOPIC_AUTHORIZATION_FAILED');
    // READ on g2 but no DESCRIBE on orders: a streams topology naming orders is refused, so no
    // streams group g2 exists to describe (READ implies DESCRIBE on the group).
    expect(await streamsGroupCalls(node, 'bob', 'g2', 'orders')).toEqual([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.GROUP_ID_NOT_FOUND]);
    const admin = kafka(node, 'bob').admin();
    await admin.connect();
    try {
      expect(await admin.listTopics()).toEqual(['payments']);
      expect(await outcome(admin.fetchTopicMetadata({ topics: ['orders'] }))).toBe('TOPIC_AUTHORIZATION_FAILED');
    } finally {
      await admin.disconnect();
    }
  });

  it('grants exactly what kafka-acls adds', async () => {
    // DESCRIBE on the group only: FindCoordinator passes, JoinGroup needs READ.
    await kafkaAcls('--add', '--allow-principal', 'User:alice', '--operation', 'Read', '--topic', 'orders');
    await kafkaAcls('--add', '--allow-principal', 'User:alice', '--operation', 'Describe', '--group', 'g1');
    expect(await consumeOne(node, 'alice', 'g1', 'orders')).toBe('GROUP_AUTHORIZATION_FAILED');
    // READ implies DESCRIBE: alice now sees orders, and only orders.
    const admin = kafka(node, 'alice').admin();
    await admin.connect();
    try {
      expect(await admin.listTopics()).toEqual(['orders']);
    } finally {
      await admin.disconnect();
    }
    // READ is not WRITE.
    expect(await produce(node, 'alice', 'orders')).toBe('TOPIC_AUTHORIZATION_FAILED');

    await kafkaAcls('--add', '--allow-principal', 'User:alice', '--operation', 'Read', '--group', 'g1');
    await kafkaAcls('--add', '--allow-principal', 'User:alice', '--producer', '--topic', 'orders');
    await kafkaAcls('--add', '--allow-principal', 'User:alice', '--operation', 'Create', '--operation', 'Describe', '--topic', 'alice-', '--resource-pattern-type', 'prefixed');
    await kafkaAcls('--add', '--allow-principal', 'User:alice', '--operation', 'ClusterAction', '--cluster');
    const listed = await kafkaAcls('--list', '--topic', 'orders');
    expect(listed).toContain('User:alice');

    expect(await produce(node, 'alice', 'orders')).toBe('ok');
    expect(await consumeOne(node, 'alice', 'g1', 'orders')).toBe('ok');
    const alice = kafka(node, 'alice').admin();
    await alice.connect();
    try {
      expect(await outcome(alice.createTopics({ topics: [{ topic: 'alice-new', numPartitions: 1 }] }))).toBe('ok');
      // PREFIXED alice- covers alice-new, never payments.
      expect(await outcome(alice.createTopics({ topics: [{ topic: 'other', numPartitions: 1 }] }))).toBe('TOPIC_AUTHORIZATION_FAILED');
      expect((await alice.listTopics()).sort()).toEqual(['alice-new', 'orders']);
    } finally {
      await alice.disconnect();
    }
    expect(await writeMirrorStates(node, 'alice')).not.toBe(CLUSTER_AUTHORIZATION_FAILED);
    // bob still may not write.
    expect(await produce(node, 'bob', 'payments')).toBe('TOPIC_AUTHORIZATION_FAILED');
  });

  it('lets a DENY win over an ALLOW', async () => {
    await kafkaAcls('--add', '--deny-principal', 'User:alice', '--operation', 'Write', '--topic', 'orders');
    expect(await produce(node, 'alice', 'orders')).toBe('TOPIC_AUTHORIZATION_FAILED');
    await kafkaAcls('--remove', '--force', '--deny-principal', 'User:alice', '--operation', 'Write', '--topic', 'orders');
    expect(await produce(node, 'alice', 'orders')).toBe('ok');
  });

  it('hides only the undescribable topics from an OffsetFetch v10, which names topics by id', async () => {
    const admin = kafka(node, 'admin').admin();
    await admin.connect();
    try {
      for (const topic of ['orders', 'payments']) await admin.setOffsets({ groupId: 'g-v10', topic, partitions: [{ partition: 0, offset: '1' }] });
    } finally {
      await admin.disconnect();
    }
    // bob may describe the group and payments, not orders.
    await kafkaAcls('--add', '--allow-principal', 'User:bob', '--operation', 'Describe', '--topic', 'payments');
    await kafkaAcls('--add', '--allow-principal', 'User:bob', '--operation', 'Describe', '--group', 'g-v10');
    const s = await SaslWire.connect(node.port('SASL_PLAINTEXT'));
    try {
      expect((await s.handshake('PLAIN')).errorCode).toBe(0);
      expect((await s.authenticate(plainToken('admin', 'admin-pw'))).errorCode).toBe(0);
      const md = decodeMetadataResponse(await s.wire.call(3, 12, (w) => encodeMetadataRequest(w, { topics: null, allowAutoTopicCreation: false }, 12)), 12);
      const idOf = (name: string): string => md.topics.find((t) => t.name === name)!.topicId;
      const ids = new Map([[idOf('orders'), 'orders'], [idOf('payments'), 'payments']]);
      s.wire.close();
      const b = await SaslWire.connect(node.port('SASL_PLAINTEXT'));
      try {
        expect((await b.handshake('PLAIN')).errorCode).toBe(0);
        expect((await b.authenticate(plainToken('bob', 'bob-pw'))).errorCode).toBe(0);
        const offsets = async (topics: NonNullable<OffsetFetchRequestInput['groups']>[number]['topics']) => {
          const r = decodeOffsetFetchResponse(await b.wire.call(9, 10, (w) => encodeOffsetFetchRequest(w, { groups: [{ groupId: 'g-v10', topics }], requireStable: false }, 10)), 10);
          return r.groups[0]!.topics.map((t) => ({ topic: ids.get(t.topicId), offset: Number(t.partitions[0]!.committedOffset), error: t.partitions[0]!.errorCode })).sort((x, y) => String(x.topic).localeCompare(String(y.topic)));
        };
        expect(await offsets([...ids.keys()].map((topicId) => ({ name: '', topicId, partitionIndexes: [0] })))).toEqual([
          { topic: 'orders', offset: -1, error: 29 },
          { topic: 'payments', offset: 1, error: 0 },
        ]);
        expect(await offsets(null)).toEqual([{ topic: 'payments', offset: 1, error: 0 }]);
      } finally {
        b.wire.close();
      }
    } finally {
      s.wire.close();
    }
  });

  it('stops an open fetch session once READ is revoked', async () => {
    const s = await SaslWire.connect(node.port('SASL_PLAINTEXT'));
    const fetch = async (sessionId: number, sessionEpoch: number, topics: string[]): Promise<FetchResponse> =>
      decodeFetchResponse(
        await s.wire.call(1, 12, (w) =>
          encodeFetchRequest(w, { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, sessionId, sessionEpoch, topics: topics.map((topic) => ({ topic, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] })) }, 12),
        ),
        12,
      );
    try {
      expect((await s.handshake('PLAIN')).errorCode).toBe(0);
      expect((await s.authenticate(plainToken('alice', 'alice-pw'))).errorCode).toBe(0);
      const opened = await fetch(0, 0, ['orders']);
      expect(opened.sessionId).not.toBe(0);
      expect(opened.responses[0]?.partitions[0]?.errorCode).toBe(0);
      const admin = kafka(node, 'admin').admin();
      await admin.connect();
      try {
        await admin.deleteAcls({ filters: [{ resourceType: 2, resourceName: 'orders', resourcePatternType: 3, principal: 'User:alice', host: '*', operation: 3, permissionType: 3 }] });
      } finally {
        await admin.disconnect();
      }
      expect(await produce(node, 'admin', 'orders')).toBe('ok');
      // The incremental fetch names no topic: the session still holds orders, and the new record is not served.
      const next = await fetch(opened.sessionId, 1, []);
      expect(next.responses.map((t) => ({ topic: t.topic, error: t.partitions[0]?.errorCode, records: t.partitions[0]?.records?.length ?? 0 }))).toEqual([{ topic: 'orders', error: 29, records: 0 }]);
    } finally {
      s.wire.close();
    }
  });
});

describe('authorizer.class.name', () => {
  it('refuses to start with an authorizer class the node does not serve', async () => {
    await expect(secured({ 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer' })).rejects.toThrow(/authorizer.class.name=kafka.security.authorizer.AclAuthorizer is not supported/);
  });
});

describe('allow.everyone.if.no.acl.found', () => {
  let node: SecureNode;

  beforeAll(async () => {
    node = await secured({ 'allow.everyone.if.no.acl.found': 'true' });
    const admin = kafka(node, 'admin').admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'open', numPartitions: 1 }, { topic: 'guarded', numPartitions: 1 }] });
    await admin.createAcls({
      acl: [{ resourceType: 2, resourceName: 'guarded', resourcePatternType: 3, principal: 'User:alice', host: '*', operation: 4, permissionType: 3 }],
    });
    await admin.disconnect();
  });

  afterAll(async () => {
    await node?.close();
  });

  it('allows anyone on a resource with no ACL, and only the named principal once one exists', async () => {
    expect(await produce(node, 'bob', 'open')).toBe('ok');
    expect(await produce(node, 'alice', 'guarded')).toBe('ok');
    expect(await produce(node, 'bob', 'guarded')).toBe('TOPIC_AUTHORIZATION_FAILED');
    // The cluster has no ACLs either, so WriteMirrorStates passes the authorizer.
    expect(await writeMirrorStates(node, 'bob')).not.toBe(CLUSTER_AUTHORIZATION_FAILED);
  });
});
