/**
 * The same ACLs and principals on Fjord and on Apache Kafka, both with StandardAuthorizer: two
 * principals authenticated over SASL PLAIN (one with ACLs on some resources, one with none) call
 * each API on resources they may and may not use, and every error code (and authorized-operations
 * bit set) must be the one Kafka answers.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reader } from '../../src/protocol/reader.js';
import type { Writer } from '../../src/protocol/writer.js';
import { encodeAlterUserScramCredentialsRequest } from '../../src/protocol/generated/messages/alter-user-scram-credentials-request.js';
import { decodeAlterUserScramCredentialsResponse } from '../../src/protocol/generated/messages/alter-user-scram-credentials-response.js';
import { encodeCreateAclsRequest } from '../../src/protocol/generated/messages/create-acls-request.js';
import { decodeCreateAclsResponse } from '../../src/protocol/generated/messages/create-acls-response.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeDeleteGroupsRequest } from '../../src/protocol/generated/messages/delete-groups-request.js';
import { decodeDeleteGroupsResponse } from '../../src/protocol/generated/messages/delete-groups-response.js';
import { encodeDeleteTopicsRequest } from '../../src/protocol/generated/messages/delete-topics-request.js';
import { decodeDeleteTopicsResponse } from '../../src/protocol/generated/messages/delete-topics-response.js';
import { encodeDescribeAclsRequest } from '../../src/protocol/generated/messages/describe-acls-request.js';
import { decodeDescribeAclsResponse } from '../../src/protocol/generated/messages/describe-acls-response.js';
import { encodeDescribeClusterRequest } from '../../src/protocol/generated/messages/describe-cluster-request.js';
import { decodeDescribeClusterResponse } from '../../src/protocol/generated/messages/describe-cluster-response.js';
import { encodeDescribeConfigsRequest } from '../../src/protocol/generated/messages/describe-configs-request.js';
import { decodeDescribeConfigsResponse } from '../../src/protocol/generated/messages/describe-configs-response.js';
import { encodeDescribeGroupsRequest } from '../../src/protocol/generated/messages/describe-groups-request.js';
import { decodeDescribeGroupsResponse } from '../../src/protocol/generated/messages/describe-groups-response.js';
import { encodeFetchRequest } from '../../src/protocol/generated/messages/fetch-request.js';
import { decodeFetchResponse } from '../../src/protocol/generated/messages/fetch-response.js';
import { encodeFindCoordinatorRequest } from '../../src/protocol/generated/messages/find-coordinator-request.js';
import { decodeFindCoordinatorResponse } from '../../src/protocol/generated/messages/find-coordinator-response.js';
import { encodeInitProducerIdRequest } from '../../src/protocol/generated/messages/init-producer-id-request.js';
import { decodeInitProducerIdResponse } from '../../src/protocol/generated/messages/init-producer-id-response.js';
import { encodeJoinGroupRequest } from '../../src/protocol/generated/messages/join-group-request.js';
import { decodeJoinGroupResponse } from '../../src/protocol/generated/messages/join-group-response.js';
import { encodeListOffsetsRequest } from '../../src/protocol/generated/messages/list-offsets-request.js';
import { decodeListOffsetsResponse } from '../../src/protocol/generated/messages/list-offsets-response.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { encodeOffsetCommitRequest } from '../../src/protocol/generated/messages/offset-commit-request.js';
import { decodeOffsetCommitResponse } from '../../src/protocol/generated/messages/offset-commit-response.js';
import { encodeOffsetFetchRequest } from '../../src/protocol/generated/messages/offset-fetch-request.js';
import { decodeOffsetFetchResponse, type OffsetFetchResponse } from '../../src/protocol/generated/messages/offset-fetch-response.js';
import { encodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../src/protocol/generated/messages/produce-response.js';
import { SaslWire, plainToken } from '../auth/sasl-helpers.js';
import { startSecureNode, type SecureNode } from '../server/secure-node.js';
import { freePort } from './lib/net.js';
import { startKafkaBroker, type KafkaBroker } from './kafka-broker.js';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-pw" user_admin="admin-pw" user_alice="alice-pw" user_bob="bob-pw";';
const AUTHORIZER = { 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:ANONYMOUS;User:admin' };
const SASL = { 'sasl.enabled.mechanisms': 'PLAIN', 'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS, 'auto.create.topics.enable': 'false' };

interface Side {
  /** PLAINTEXT: the anonymous super user sets the scene. */
  readonly plain: string;
  /** SASL_PLAINTEXT, where alice logs in. */
  readonly saslPort: number;
}

/** LITERAL (3) / PREFIXED (4) bindings for alice, as kafka-acls would add them. */
const ACLS = [
  { resourceType: 2, resourceName: 'orders', resourcePatternType: 3, operation: 3, permissionType: 3 }, // READ orders
  { resourceType: 2, resourceName: 'pay', resourcePatternType: 4, operation: 2, permissionType: 3 }, // ALL on pay*
  { resourceType: 2, resourceName: 'payments', resourcePatternType: 3, operation: 4, permissionType: 2 }, // DENY WRITE payments
  { resourceType: 3, resourceName: 'g1', resourcePatternType: 3, operation: 8, permissionType: 3 }, // DESCRIBE g1
  { resourceType: 4, resourceName: 'kafka-cluster', resourcePatternType: 3, operation: 8, permissionType: 3 }, // DESCRIBE cluster
].map((a) => ({ ...a, principal: 'User:alice', host: '*' }));

async function setScene(side: Side): Promise<void> {
  const admin = new Kafka({ clientId: 'authz-diff', brokers: [side.plain], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ waitForLeaders: true, topics: ['orders', 'payments', 'hidden'].map((topic) => ({ topic, numPartitions: 1 })) });
    await admin.createAcls({ acl: ACLS });
  } finally {
    await admin.disconnect();
  }
}

/** Coordinator codes a fresh Kafka answers until its internal topics are up (not authorization). */
const COORDINATOR_WARMING: ReadonlySet<number> = new Set([14, 15, 16]);

/** Repeats `fn` while it answers a warming coordinator code, up to a deadline. */
async function settled(fn: () => Promise<number>): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const code = await fn();
    if (!COORDINATOR_WARMING.has(code) || Date.now() > deadline) return code;
    await new Promise((r) => setTimeout(r, 250));
  }
}

type Encode<In> = (w: Writer, m: In, v: number) => void;
type Decode<Out> = (r: Reader, v: number) => Out;

/** What a user gets from each API: error codes and bit sets, keyed by what was asked. */
async function observe(side: Side, user: string): Promise<Record<string, unknown>> {
  const s = await SaslWire.connect(side.saslPort);
  const call = async <In, Out>(apiKey: number, v: number, enc: Encode<In>, dec: Decode<Out>, body: In): Promise<Out> => dec(await s.wire.call(apiKey, v, (w) => enc(w, body, v)), v);
  try {
    expect((await s.handshake('PLAIN')).errorCode).toBe(0);
    expect((await s.authenticate(plainToken(user, `${user}-pw`))).errorCode).toBe(0);
    const obs: Record<string, unknown> = {};
    const named = await call(3, 12, encodeMetadataRequest, decodeMetadataResponse, {
      topics: ['orders', 'payments', 'hidden', 'nosuch', 'paynew'].map((name) => ({ name })),
      allowAutoTopicCreation: false,
      includeTopicAuthorizedOperations: true,
    });
    obs.metadataNamed = Object.fromEntries(named.topics.map((t) => [t.name, { error: t.errorCode, ops: t.topicAuthorizedOperations }]));
    const all = await call(3, 10, encodeMetadataRequest, decodeMetadataResponse, { topics: null, includeClusterAuthorizedOperations: true });
    obs.metadataAll = all.topics.map((t) => t.name).filter((n) => n && !n.startsWith('__')).sort();
    obs.clusterOpsInMetadata = all.clusterAuthorizedOperations;
    const cluster = await call(60, 1, encodeDescribeClusterRequest, decodeDescribeClusterResponse, { includeClusterAuthorizedOperations: true });
    obs.describeCluster = { error: cluster.errorCode, ops: cluster.clusterAuthorizedOperations };
    const produced = await call(0, 9, encodeProduceRequest, decodeProduceResponse, {
      acks: -1,
      timeoutMs: 5000,
      topicData: ['orders', 'payments', 'hidden'].map((name) => ({ name, partitionData: [{ index: 0, records: null }] })),
    });
    obs.produce = Object.fromEntries(produced.responses.map((t) => [t.name, t.partitionResponses[0]?.errorCode]));
    const fetched = await call(1, 12, encodeFetchRequest, decodeFetchResponse, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      sessionEpoch: -1,
      topics: ['orders', 'hidden'].map((topic) => ({ topic, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] })),
    });
    obs.fetch = Object.fromEntries(fetched.responses.map((t) => [t.topic, t.partitions[0]?.errorCode]));
    const offsets = await call(2, 7, encodeListOffsetsRequest, decodeListOffsetsResponse, {
      replicaId: -1,
      topics: ['orders', 'hidden'].map((name) => ({ name, partitions: [{ partitionIndex: 0, timestamp: -1n }] })),
    });
    obs.listOffsets = Object.fromEntries(offsets.topics.map((t) => [t.name, t.partitions[0]?.errorCode]));
    for (const key of ['g1', 'g2']) obs[`findCoordinator.${key}`] = await settled(async () => (await call(10, 3, encodeFindCoordinatorRequest, decodeFindCoordinatorResponse, { key, keyType: 0 })).errorCode);
    obs.findCoordinatorTxn = (await call(10, 3, encodeFindCoordinatorRequest, decodeFindCoordinatorResponse, { key: 'tx1', keyType: 1 })).errorCode;
    obs.joinGroup = (
      await call(11, 5, encodeJoinGroupRequest, decodeJoinGroupResponse, { groupId: 'g1', sessionTimeoutMs: 10000, rebalanceTimeoutMs: 10000, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }] })
    ).errorCode;
    const committed = await call(8, 8, encodeOffsetCommitRequest, decodeOffsetCommitResponse, {
      groupId: 'g1',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 0n }] }],
    });
    obs.offsetCommit = committed.topics[0]?.partitions[0]?.errorCode;
    const offsetFetch = (): Promise<OffsetFetchResponse> =>
      call(9, 7, encodeOffsetFetchRequest, decodeOffsetFetchResponse, { groupId: 'g1', topics: ['orders', 'hidden'].map((name) => ({ name, partitionIndexes: [0] })) });
    await settled(async () => (await offsetFetch()).errorCode);
    const fetchedOffsets = await offsetFetch();
    obs.offsetFetch = { error: fetchedOffsets.errorCode, topics: Object.fromEntries(fetchedOffsets.topics.map((t) => [t.name, t.partitions[0]?.errorCode])) };
    obs.offsetFetchG2 = (await call(9, 7, encodeOffsetFetchRequest, decodeOffsetFetchResponse, { groupId: 'g2', topics: null })).errorCode;
    const described = await call(15, 5, encodeDescribeGroupsRequest, decodeDescribeGroupsResponse, { groups: ['g2'], includeAuthorizedOperations: true });
    obs.describeGroups = described.groups.map((g) => ({ group: g.groupId, error: g.errorCode }));
    obs.deleteGroups = (await call(42, 2, encodeDeleteGroupsRequest, decodeDeleteGroupsResponse, { groupsNames: ['g1'] })).results.map((r) => r.errorCode);
    const created = await call(19, 5, encodeCreateTopicsRequest, decodeCreateTopicsResponse, {
      topics: ['newtopic', 'paynew'].map((name) => ({ name, numPartitions: 1, replicationFactor: 1 })),
      timeoutMs: 10000,
      validateOnly: true,
    });
    obs.createTopics = Object.fromEntries(created.topics.map((t) => [t.name, t.errorCode]));
    const deleted = await call(20, 5, encodeDeleteTopicsRequest, decodeDeleteTopicsResponse, { topicNames: ['orders', 'hidden'], timeoutMs: 10000 });
    obs.deleteTopics = Object.fromEntries(deleted.responses.map((t) => [t.name, t.errorCode]));
    const configs = await call(32, 4, encodeDescribeConfigsRequest, decodeDescribeConfigsResponse, {
      resources: [
        { resourceType: 2, resourceName: 'orders', configurationKeys: ['retention.ms'] },
        { resourceType: 2, resourceName: 'payments', configurationKeys: ['retention.ms'] },
        { resourceType: 4, resourceName: '1', configurationKeys: ['num.partitions'] },
      ],
    });
    obs.describeConfigs = Object.fromEntries(configs.results.map((r) => [`${r.resourceType}:${r.resourceName}`, r.errorCode]));
    obs.describeAcls = (await call(29, 2, encodeDescribeAclsRequest, decodeDescribeAclsResponse, { resourceTypeFilter: 1, patternTypeFilter: 1, operation: 1, permissionType: 1 })).errorCode;
    obs.createAcls = (await call(30, 2, encodeCreateAclsRequest, decodeCreateAclsResponse, { creations: [{ ...ACLS[0]!, resourceName: 'x' }] })).results.map((r) => r.errorCode);
    obs.initProducerIdTxn = (await call(22, 4, encodeInitProducerIdRequest, decodeInitProducerIdResponse, { transactionalId: 'tx1', transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 })).errorCode;
    // ALL on pay* includes WRITE on some topic: an idempotent producer is allowed.
    obs.initProducerIdIdempotent = await settled(
      async () => (await call(22, 4, encodeInitProducerIdRequest, decodeInitProducerIdResponse, { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 })).errorCode,
    );
    obs.alterScram = (
      await call(51, 0, encodeAlterUserScramCredentialsRequest, decodeAlterUserScramCredentialsResponse, { deletions: [{ name: 'bob', mechanism: 1 }] })
    ).results.map((r) => r.errorCode);
    return obs;
  } finally {
    s.wire.close();
  }
}

describe('authorization differential: Fjord and Apache Kafka with StandardAuthorizer', () => {
  let kafka: KafkaBroker;
  let fjord: SecureNode;
  let saslPort = 0;

  beforeAll(async () => {
    saslPort = await freePort();
    kafka = await startKafkaBroker({
      overrides: ({ port, controllerPort }) => ({
        listeners: `PLAINTEXT://127.0.0.1:${port},SASL_PLAINTEXT://127.0.0.1:${saslPort},CONTROLLER://127.0.0.1:${controllerPort}`,
        'advertised.listeners': `PLAINTEXT://127.0.0.1:${port},SASL_PLAINTEXT://127.0.0.1:${saslPort}`,
        'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT',
        ...AUTHORIZER,
        ...SASL,
      }),
    });
    fjord = await startSecureNode({
      listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT',
      ...AUTHORIZER,
      ...SASL,
    });
  });

  afterAll(async () => {
    await fjord?.close();
    await kafka?.stop();
  });

  it('answers every API with the error codes Kafka answers', async () => {
    const kafkaSide = { plain: kafka.bootstrap, saslPort };
    const fjordSide = { plain: `127.0.0.1:${fjord.port('PLAINTEXT')}`, saslPort: fjord.port('SASL_PLAINTEXT') };
    await setScene(kafkaSide);
    await setScene(fjordSide);
    // alice holds the ACLs above; bob holds none.
    for (const user of ['alice', 'bob']) {
      const expected = await observe(kafkaSide, user);
      const actual = await observe(fjordSide, user);
      expect({ user, ...actual }).toEqual({ user, ...expected });
    }
  });
});
