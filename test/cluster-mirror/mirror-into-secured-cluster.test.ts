/**
 * A mirror into a secured cluster: three Fjord nodes (real etcd, real `fjord start` processes)
 * whose only listener is SASL_SSL, with SCRAM-SHA-512 as the inter-broker mechanism and
 * StandardAuthorizer on, mirror a topic from a plain Fjord source node. The nodes' own SCRAM
 * credential is added through the listener by the admin (PLAIN, a super user) once they are up,
 * as `kafka-configs --add-config` would; the nodes' principal gets CLUSTER_ACTION.
 *
 * Over SCRAM between the nodes run the follower fetches and the mirror state RPCs
 * (Read/WriteMirrorStates to the `__mirror_state` leaders), so records arrive with CLUSTER_ACTION
 * alone. The syncs the mirror writes through the node itself run as the node's principal too:
 * refused by the authorizer, each round says so in a warning; once the principal may alter topic
 * configs and commit group offsets, the source's topic config and its group's committed offsets
 * arrive. A destination leader SIGKILLed mid-mirror hands its partitions to new leaders, which
 * catch up with the source: every surviving replica ends equal to the source, byte for byte.
 */
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorAdmin, type PartitionMirrorDescription } from '../../src/admin/mirror-admin.js';
import type { ApiSpec } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { ApiKey } from '../../src/protocol/generated/api-table.js';
import { encodeAlterUserScramCredentialsRequest, type AlterUserScramCredentialsRequestInput } from '../../src/protocol/generated/messages/alter-user-scram-credentials-request.js';
import { decodeAlterUserScramCredentialsResponse, type AlterUserScramCredentialsResponse } from '../../src/protocol/generated/messages/alter-user-scram-credentials-response.js';
import { eventually } from '../helpers/cluster.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { startSecuredCluster, type SecuredCluster } from '../helpers/secured-cluster.js';

const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = kafkajs;
const ADMIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";';
const BROKER_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="broker-secret";';
const TOPIC = 'payments';
const PARTITIONS = 3;
const MIRROR = 'dr-secure';
const GROUP = 'settlement';
const ALTER_USER_SCRAM_CREDENTIALS: ApiSpec<AlterUserScramCredentialsRequestInput, AlterUserScramCredentialsResponse> = {
  apiKey: ApiKey.AlterUserScramCredentials,
  versions: [0, 0],
  encode: encodeAlterUserScramCredentialsRequest,
  decode: decodeAlterUserScramCredentialsResponse,
};

let secured: SecuredCluster;
let source: RunningNode;
const closers: (() => void)[] = [];

/** The destination nodes running now. */
const liveNodes = () => secured.cluster.nodes.filter((n) => n.running !== null);

function mirrorAdmin(): MirrorAdmin {
  const a = new MirrorAdmin(secured.adminOptions());
  closers.push(() => a.close());
  return a;
}

const withDestinationAdmin: SecuredCluster['withAdmin'] = (fn) => secured.withAdmin(fn);

const sourceKafka = (): InstanceType<typeof Kafka> => new Kafka({ clientId: 'secured-mirror-source', brokers: [source.bootstrap], logLevel: logLevel.NOTHING });

async function produce(from: number, to: number): Promise<void> {
  const p = sourceKafka().producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await p.connect();
  try {
    for (let i = from; i < to; i += 50) {
      const n = Math.min(50, to - i);
      await p.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: n }, (_, j) => ({ partition: (i + j) % PARTITIONS, value: `v${i + j}` })) });
    }
  } finally {
    await p.disconnect();
  }
}

async function described(): Promise<readonly PartitionMirrorDescription[]> {
  const [m] = await mirrorAdmin().describeClusterMirrors([MIRROR]);
  return (m?.partitions ?? []).filter((p) => p.topic === TOPIC);
}

/** Every partition MIRRORING at the source's end, `perPartition` records each. */
async function caughtUp(perPartition: number): Promise<readonly PartitionMirrorDescription[] | null> {
  const parts = await described();
  return parts.length === PARTITIONS && parts.every((p) => p.state === 'MIRRORING' && p.lag === 0 && p.destinationOffset === perPartition) ? parts : null;
}

async function leaders(): Promise<number[]> {
  return withDestinationAdmin(async (a) => {
    const t = (await a.fetchTopicMetadata({ topics: [TOPIC] })).topics[0]!;
    return [...t.partitions].sort((x, y) => x.partitionId - y.partitionId).map((p) => p.leader);
  });
}

function mirrorLogs(): string {
  return liveNodes().map((n) => n.logs().split('\n').filter((l) => l.includes('mirror') || l.includes('SASL') || l.includes('auth')).slice(-20).join('\n')).join('\n---\n');
}

beforeAll(async () => {
  source = await startNode({});
  secured = await startSecuredCluster({
    nodes: 3,
    interBrokerMechanism: 'SCRAM-SHA-512',
    jaas: { PLAIN: ADMIN_JAAS, 'SCRAM-SHA-512': BROKER_JAAS },
    clientId: 'secured-mirror-test',
    overrides: {
      'replica.lag.time.max.ms': 3000,
      'auto.leader.rebalance.enable': false,
      'default.replication.factor': 3,
      'offsets.topic.replication.factor': 3,
      'mirror.state.topic.replication.factor': 3,
      'mirror.state.topic.num.partitions': 5,
      'mirror.metadata.refresh.interval.ms': 1000,
      'mirror.failed.retry.initial.backoff.ms': 200,
      'mirror.failed.retry.max.backoff.ms': 1000,
    },
  });

  // The nodes' own login: a SCRAM-SHA-512 credential for User:broker, and CLUSTER_ACTION for it.
  const salt = randomBytes(24);
  const admin = new KafkaClient(secured.adminOptions());
  closers.push(() => admin.close());
  const added = await admin.send(ALTER_USER_SCRAM_CREDENTIALS, { deletions: [], upsertions: [{ name: 'broker', mechanism: 2, iterations: 4096, salt, saltedPassword: pbkdf2Sync('broker-secret', salt, 4096, 64, 'sha512') }] });
  expect(added.results.map((r) => r.errorCode)).toEqual([0]);
  await secured.grantClusterAction('User:broker');

  const src = sourceKafka().admin();
  await src.connect();
  try {
    await src.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS, configEntries: [{ name: 'retention.ms', value: '7200000' }] }], waitForLeaders: true });
  } finally {
    await src.disconnect();
  }
}, 240_000);

afterAll(async () => {
  for (const c of closers) c();
  await secured?.destroy();
  await source?.destroy();
}, 60_000);

function segments(dataDir: string, partition: number): Buffer {
  const dir = join(dataDir, `${TOPIC}-${partition}`);
  if (!existsSync(dir)) return Buffer.alloc(0);
  return Buffer.concat(readdirSync(dir).filter((f) => f.endsWith('.log')).sort().map((f) => readFileSync(join(dir, f))));
}

/** Every live destination replica of every partition equals the source's log, byte for byte. */
function replicasEqualSource(): boolean {
  for (let p = 0; p < PARTITIONS; p++) {
    const want = segments(source.dataDir, p);
    for (const n of liveNodes()) if (!segments(n.dataDir!, p).equals(want)) return false;
  }
  return true;
}

async function destinationRetention(): Promise<string | undefined> {
  return withDestinationAdmin(async (a) => {
    const r = await a.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: TOPIC }] });
    return r.resources[0]?.configEntries.find((e) => e.configName === 'retention.ms')?.configValue;
  });
}

const allow = (resourceType: number, resourceName: string, operation: number) => ({
  resourceType,
  resourceName,
  resourcePatternType: ResourcePatternTypes.LITERAL,
  principal: 'User:broker',
  host: '*',
  operation,
  permissionType: AclPermissionTypes.ALLOW,
});

describe('mirroring into a cluster whose only listener is SASL_SSL, SCRAM-SHA-512 between the nodes', () => {
  it('mirrors records with CLUSTER_ACTION alone; the syncs through the node are refused, with a warning', async () => {
    await produce(0, 300);
    // No ACL sync. This plain source has no authorizer, so the sync would only be skipped; from a
    // source with one and no ACLs it would delete every destination ACL not on the source, the
    // nodes' own CLUSTER_ACTION grant with them (docs/cluster.md).
    await mirrorAdmin().createClusterMirror(MIRROR, { 'bootstrap.servers': source.bootstrap, 'mirror.fetch.wait.max.ms': '100', 'mirror.socket.timeout.ms': '3000', 'mirror.acls.include': '' });
    expect((await mirrorAdmin().startMirrorTopics(MIRROR, [TOPIC])).map((t) => t.errorCode)).toEqual([0]);
    await eventually('every partition MIRRORING with 100 records', () => caughtUp(100), 60_000).catch((e: unknown) => {
      console.log(mirrorLogs());
      throw e;
    });
    await eventually('every replica equal to the source', async () => (replicasEqualSource() ? true : null), 30_000);
    const refused = /"level":"warn","msg":"mirror dr-secure: topic config sync failed: this node refused its own principal DESCRIBE_CONFIGS on topic payments \(TOPIC_AUTHORIZATION_FAILED\)/;
    await eventually('a warning for the refused topic config sync', async () => (liveNodes().some((n) => refused.test(n.logs())) ? true : null), 30_000);
    expect(await destinationRetention()).not.toBe('7200000');
  }, 120_000);

  it('copies the topic config and group offsets once the node principal may write them', async () => {
    await withDestinationAdmin((a) =>
      a.createAcls({
        acl: [
          allow(AclResourceTypes.TOPIC, '*', AclOperationTypes.ALL),
          allow(AclResourceTypes.GROUP, '*', AclOperationTypes.ALL),
        ],
      }),
    );
    const src = sourceKafka().admin();
    await src.connect();
    try {
      await src.setOffsets({ groupId: GROUP, topic: TOPIC, partitions: [0, 1, 2].map((partition) => ({ partition, offset: String(40 + partition) })) });
    } finally {
      await src.disconnect();
    }
    await eventually('the source topic config', async () => ((await destinationRetention()) === '7200000' ? true : null), 30_000).catch((e: unknown) => {
      console.log(mirrorLogs());
      throw e;
    });
    await eventually(
      'the source group offsets',
      () =>
        withDestinationAdmin(async (a) => {
          const r = await a.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
          const offsets = (r[0]?.partitions ?? []).sort((x, y) => x.partition - y.partition).map((p) => p.offset);
          return offsets.join(',') === '40,41,42' ? true : null;
        }),
      30_000,
    ).catch((e: unknown) => {
      console.log(mirrorLogs());
      throw e;
    });
  }, 120_000);

  it('goes on after a destination leader is SIGKILLed mid-mirror', async () => {
    const victim = (await leaders())[0]!;
    const writing = produce(300, 1500);
    await eventually('the mirror copying the new records', async () => ((await described()).some((p) => p.destinationOffset > 100) ? true : null), 30_000);
    await secured.cluster.node(victim).kill();
    await writing;
    await eventually('every partition caught up on a live leader', async () => {
      const parts = await caughtUp(500);
      const now = await leaders();
      return parts !== null && now.every((l) => l > 0 && l !== victim) ? true : null;
    }, 90_000).catch(async (e: unknown) => {
      console.log(JSON.stringify(await described().catch(() => [])));
      console.log(mirrorLogs());
      throw e;
    });
    // Nothing lost or duplicated: the surviving replicas are the source's logs, byte for byte.
    await eventually('every surviving replica equal to the source', async () => (replicasEqualSource() ? true : null), 60_000);
  }, 240_000);
});
