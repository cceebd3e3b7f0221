/**
 * The status pages on a node with the authorizer on: a logged-in SASL user also needs DESCRIBE on
 * the cluster (403 without it, as Kafka's DescribeCluster refuses), and once granted the page shows
 * the whole node, as the node reads itself, not only the topics that user may describe.
 */
import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, Kafka, logLevel, ResourcePatternTypes } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, startNode, type RunningNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";';

let node: RunningNode;
let metrics: number;
let saslPort: number;

beforeAll(async () => {
  const port = await freePort();
  saslPort = await freePort();
  metrics = await freePort();
  node = await startNode({
    port,
    overrides: {
      listeners: `PLAINTEXT://127.0.0.1:${port},SASL_PLAINTEXT://127.0.0.1:${saslPort}`,
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT',
      'sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
      'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      'super.users': 'User:admin;User:ANONYMOUS',
      'metrics.listener': `http://127.0.0.1:${metrics}`,
    },
  });
}, 120_000);

afterAll(async () => {
  await node?.destroy();
});

const asAdmin = (): Kafka =>
  new Kafka({ clientId: 'status-authz', brokers: [`127.0.0.1:${saslPort}`], logLevel: logLevel.NOTHING, retry: { retries: 0 }, sasl: { mechanism: 'plain', username: 'admin', password: 'admin-secret' } });

const statusAs = (user: string, password: string): Promise<Response> =>
  fetch(`http://127.0.0.1:${metrics}/status.json`, { headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` } });

it('asks a logged-in user for DESCRIBE on the cluster, then shows every topic', async () => {
  const admin = asAdmin().admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: 'ledger', numPartitions: 2 }], waitForLeaders: true });
    const refused = await statusAs('alice', 'alice-secret');
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('User:alice may not DESCRIBE the cluster');
    // A super user needs no ACL.
    expect((await statusAs('admin', 'admin-secret')).status).toBe(200);
    await admin.createAcls({
      acl: [
        {
          resourceType: AclResourceTypes.CLUSTER,
          resourceName: 'kafka-cluster',
          resourcePatternType: ResourcePatternTypes.LITERAL,
          principal: 'User:alice',
          host: '*',
          operation: AclOperationTypes.DESCRIBE,
          permissionType: AclPermissionTypes.ALLOW,
        },
      ],
    });
    let res = await statusAs('alice', 'alice-secret');
    await waitFor("alice's DESCRIBE on the cluster to open the status page", async () => (res = await statusAs('alice', 'alice-secret')).status === 200, 20_000);
    expect(res.status).toBe(200);
    // alice has no ACL on the topic, yet the page lists it: the node reads itself.
    const body = (await res.json()) as { cluster: { topics: { name: string }[] } };
    expect(body.cluster.topics.map((t) => t.name)).toContain('ledger');
  } finally {
    await admin.disconnect();
  }
}, 90_000);
