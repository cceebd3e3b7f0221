/**
 * A secured Fjord cluster for tests: the nodes of test/helpers/cluster.ts whose only listener,
 * SECURE, is SASL_SSL with the test PKI (test/server/tls-fixtures.ts), the nodes reaching each
 * other over it with the SASL mechanism given, StandardAuthorizer on and User:admin a super
 * user. The admin logs in with PLAIN as admin/admin-secret, so every listener's PLAIN JAAS
 * config must hold `user_admin="admin-secret"`.
 */
import kafkajs from 'kafkajs';
import { clientOptionsFromConfig, type KafkaClientOptions } from '../../src/client/client-options.js';
import { STORE_PASSWORD, makeTestPki, type TestPki } from '../server/tls-fixtures.js';
import { startCluster, type RunningCluster } from './cluster.js';

const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = kafkajs;

type Admin = ReturnType<InstanceType<typeof Kafka>['admin']>;

export interface SecuredClusterOptions {
  readonly nodes: number;
  /** `sasl.mechanism.inter.broker.protocol`: what the nodes log in to each other with. */
  readonly interBrokerMechanism: string;
  /** The listener's JAAS config per SASL mechanism (e.g. PLAIN, SCRAM-SHA-512); these are the mechanisms it enables. */
  readonly jaas: Readonly<Record<string, string>>;
  /** Further node settings (replication factors, mirror timings). */
  readonly overrides?: Record<string, string | number | boolean>;
  /** The client id of the test's clients. */
  readonly clientId: string;
}

export interface SecuredCluster {
  readonly pki: TestPki;
  readonly cluster: RunningCluster;
  /** Bootstrap addresses of the nodes running now. */
  live(): string[];
  /** A kafkajs client logged in as the admin over SASL_SSL, trusting the test CA. */
  kafka(brokers?: string[]): InstanceType<typeof Kafka>;
  withAdmin<T>(fn: (a: Admin) => Promise<T>): Promise<T>;
  /** Fjord client options of the admin (SASL_SSL, PLAIN, the test trust store) to the nodes running now. */
  adminOptions(): KafkaClientOptions;
  /** Grants `principal` CLUSTER_ACTION, which the nodes' own principal needs to replicate. */
  grantClusterAction(principal: string): Promise<void>;
  destroy(): Promise<void>;
}

/** The settings that make SECURE on `port` the node's only listener, SASL_SSL, and turn the authorizer on. */
export function securedListenerOverrides(pki: TestPki, port: number, interBrokerMechanism: string, jaas: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {
    listeners: `SECURE://127.0.0.1:${port}`,
    'listener.security.protocol.map': 'SECURE:SASL_SSL',
    'inter.broker.listener.name': 'SECURE',
    'sasl.mechanism.inter.broker.protocol': interBrokerMechanism,
    'listener.name.secure.sasl.enabled.mechanisms': Object.keys(jaas).join(','),
  };
  for (const [mechanism, config] of Object.entries(jaas)) out[`listener.name.secure.${mechanism.toLowerCase()}.sasl.jaas.config`] = config;
  return {
    ...out,
    'listener.name.secure.ssl.keystore.location': pki.server.p12,
    'listener.name.secure.ssl.keystore.type': 'PKCS12',
    'listener.name.secure.ssl.keystore.password': STORE_PASSWORD,
    'listener.name.secure.ssl.truststore.location': pki.truststoreP12,
    'listener.name.secure.ssl.truststore.type': 'PKCS12',
    'listener.name.secure.ssl.truststore.password': STORE_PASSWORD,
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'super.users': 'User:admin',
  };
}

export async function startSecuredCluster(opts: SecuredClusterOptions): Promise<SecuredCluster> {
  const pki = makeTestPki();
  let cluster: RunningCluster;
  try {
    cluster = await startCluster({
      nodes: opts.nodes,
      ...(opts.overrides ? { overrides: opts.overrides } : {}),
      nodeOverrides: (_nodeId, port) => securedListenerOverrides(pki, port, opts.interBrokerMechanism, opts.jaas),
    });
  } catch (err) {
    pki.cleanup();
    throw err;
  }
  const live = (): string[] => cluster.nodes.filter((n) => n.running !== null).map((n) => n.bootstrap);
  const kafka = (brokers = live()): InstanceType<typeof Kafka> =>
    new Kafka({ clientId: opts.clientId, brokers, ssl: { ca: [pki.caPem] }, sasl: { mechanism: 'plain', username: 'admin', password: 'admin-secret' }, logLevel: logLevel.NOTHING, retry: { retries: 8 } });
  const withAdmin = async <T>(fn: (a: Admin) => Promise<T>): Promise<T> => {
    const admin = kafka().admin();
    await admin.connect();
    try {
      return await fn(admin);
    } finally {
      await admin.disconnect();
    }
  };
  return {
    pki,
    cluster,
    live,
    kafka,
    withAdmin,
    adminOptions: () =>
      clientOptionsFromConfig(
        new Map([
          ['bootstrap.servers', live().join(',')],
          ['security.protocol', 'SASL_SSL'],
          ['sasl.mechanism', 'PLAIN'],
          ['sasl.jaas.config', 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";'],
          ['ssl.truststore.location', pki.truststoreP12],
          ['ssl.truststore.type', 'PKCS12'],
          ['ssl.truststore.password', STORE_PASSWORD],
          ['request.timeout.ms', '10000'],
        ]),
        opts.clientId,
      ),
    grantClusterAction: async (principal) => {
      await withAdmin((a) =>
        a.createAcls({
          acl: [{ resourceType: AclResourceTypes.CLUSTER, resourceName: 'kafka-cluster', resourcePatternType: ResourcePatternTypes.LITERAL, principal, host: '*', operation: AclOperationTypes.CLUSTER_ACTION, permissionType: AclPermissionTypes.ALLOW }],
        }),
      );
    },
    async destroy() {
      await cluster.destroy();
      pki.cleanup();
    },
  };
}
