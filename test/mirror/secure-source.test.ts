/**
 * Apache Kafka as a secured mirror source: a SASL_SSL listener with SCRAM-SHA-512 and an SSL
 * listener that requires a client certificate, StandardAuthorizer with no access unless an ACL
 * grants it, certificates made at test time with openssl and keytool. The mirror principal holds
 * only the source permissions KIP-1279 lists (READ, DESCRIBE and DESCRIBE_CONFIGS on the mirrored
 * topics, DESCRIBE on groups and on the cluster). A Fjord node process is the destination, driven
 * through `fjord cluster-mirrors` and Kafka's own wire APIs.
 *
 * Shown: mirroring catches up byte for byte, failover (stop: writable) and restart from the
 * source (the old copy truncated and mirrored again); the credentials are never shown by
 * DescribeConfigs; a topic without READ fails with TOPIC_AUTHORIZATION_FAILED until READ is
 * granted; a wrong password fails the partitions with SASL_AUTHENTICATION_FAILED and fixing it
 * with IncrementalAlterConfigs reconnects and resumes with no gap; SASL sessions that the source
 * ends every 3 s (connections.max.reauth.ms), re-authenticated; topics started by a pattern the
 * node resolves with its own (hidden) credentials; an mTLS source; and
 * `mirror.replication.throttled.rate`, set at run time, holds the catch-up near the rate.
 *
 * The PLAINTEXT listener stays for the test's own admin work (its anonymous principal is a super
 * user); the mirror only ever reaches the secured ports.
 */
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, Kafka, ResourcePatternTypes, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaConnection } from '../../src/client/kafka-connection.js';
import { clusterMirrors, type CliRun } from '../helpers/mirror-cli.js';
import { ConfigResourceType } from '../../src/protocol/config-resource-type.js';
import { ApiKey } from '../../src/protocol/generated/api-table.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeAlterUserScramCredentialsRequest } from '../../src/protocol/generated/messages/alter-user-scram-credentials-request.js';
import { decodeAlterUserScramCredentialsResponse } from '../../src/protocol/generated/messages/alter-user-scram-credentials-response.js';
import { encodeDescribeConfigsRequest } from '../../src/protocol/generated/messages/describe-configs-request.js';
import { decodeDescribeConfigsResponse } from '../../src/protocol/generated/messages/describe-configs-response.js';
import { encodeIncrementalAlterConfigsRequest } from '../../src/protocol/generated/messages/incremental-alter-configs-request.js';
import { decodeIncrementalAlterConfigsResponse } from '../../src/protocol/generated/messages/incremental-alter-configs-response.js';
import { startNode, type RunningNode } from '../helpers/node.js';
import { STORE_PASSWORD, makeTestPki, type TestPki } from '../server/tls-fixtures.js';
import { startKafkaSource, type KafkaBroker } from './helpers/kafka-source.js';
import { waitFor } from '../helpers/wait.js';

const MIRROR = 'secure';
const USER = 'mirror';
const PASSWORD = 'mirror-secret';
const SCRAM_JAAS = (password: string): string => `org.apache.kafka.common.security.scram.ScramLoginModule required username="${USER}" password="${password}";`;
/** The principal Kafka's default SSL principal builder gives the test client certificate. */
const MTLS_PRINCIPAL = 'User:CN=alice,OU=Clients,O=Fjord';
const BROKER_RESOURCE = 4;

let pki: TestPki;
let kafka: KafkaBroker;
let kafkaAdmin: Admin;
let fjord: RunningNode;

beforeAll(async () => {
  pki = makeTestPki();
  [kafka, fjord] = await Promise.all([
    startKafkaSource({
      extraListeners: [
        { name: 'SASL_SSL', protocol: 'SASL_SSL' },
        { name: 'MTLS', protocol: 'SSL' },
      ],
      overrides: {
        'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
        'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
        'ssl.keystore.type': 'PKCS12',
        'ssl.keystore.location': pki.server.p12,
        'ssl.keystore.password': STORE_PASSWORD,
        'ssl.key.password': STORE_PASSWORD,
        'ssl.truststore.location': pki.truststoreJks,
        'ssl.truststore.password': STORE_PASSWORD,
        'listener.name.mtls.ssl.client.auth': 'required',
        // Sessions end every few seconds: the mirror's connections re-authenticate (KIP-368).
        'listener.name.sasl_ssl.connections.max.reauth.ms': '3000',
        'allow.everyone.if.no.acl.found': 'false',
      },
    }),
    startNode({ overrides: { 'mirror.failed.retry.initial.backoff.ms': 200, 'mirror.failed.retry.max.backoff.ms': 1000, 'mirror.metadata.refresh.interval.ms': 1000 } }),
  ]);
  await addScramUser(USER, PASSWORD);
  kafkaAdmin = new Kafka({ clientId: 'secure', brokers: [kafka.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await kafkaAdmin.connect();
  // The source permissions of KIP-1279 §11, for the SCRAM principal on `sec-*` and the
  // certificate principal on `mtls-*`; `locked` can be described but not read.
  const allow = (principal: string, resourceType: AclResourceTypes, resourceName: string, operation: AclOperationTypes, prefixed = false) => ({
    resourceType,
    resourceName,
    resourcePatternType: prefixed ? ResourcePatternTypes.PREFIXED : ResourcePatternTypes.LITERAL,
    principal,
    host: '*',
    operation,
    permissionType: AclPermissionTypes.ALLOW,
  });
  const acl = [];
  for (const [principal, prefix] of [[`User:${USER}`, 'sec-'], [MTLS_PRINCIPAL, 'mtls-']] as const) {
    for (const op of [AclOperationTypes.READ, AclOperationTypes.DESCRIBE, AclOperationTypes.DESCRIBE_CONFIGS]) acl.push(allow(principal, AclResourceTypes.TOPIC, prefix, op, true));
    acl.push(allow(principal, AclResourceTypes.GROUP, '*', AclOperationTypes.DESCRIBE));
    acl.push(allow(principal, AclResourceTypes.CLUSTER, 'kafka-cluster', AclOperationTypes.DESCRIBE));
  }
  for (const op of [AclOperationTypes.DESCRIBE, AclOperationTypes.DESCRIBE_CONFIGS]) acl.push(allow(`User:${USER}`, AclResourceTypes.TOPIC, 'locked', op));
  await kafkaAdmin.createAcls({ acl });
}, 300_000);

afterAll(async () => {
  await kafkaAdmin?.disconnect();
  await Promise.all([kafka?.stop(), fjord?.destroy()]);
  pki?.cleanup();
});

/** A SCRAM-SHA-512 credential on the source, as `kafka-configs --add-config` sends it. */
async function addScramUser(name: string, password: string): Promise<void> {
  const salt = randomBytes(32);
  const iterations = 8192;
  const saltedPassword = pbkdf2Sync(password, salt, iterations, 64, 'sha512');
  const c = await KafkaConnection.connect({ host: '127.0.0.1', port: kafka.port, clientId: 'secure' });
  try {
    const res = await c.request(
      ApiKey.AlterUserScramCredentials,
      0,
      (w) => encodeAlterUserScramCredentialsRequest(w, { deletions: [], upsertions: [{ name, mechanism: 2, iterations, salt, saltedPassword }] }, 0),
      (r) => decodeAlterUserScramCredentialsResponse(r, 0),
    );
    expect(res.results.map((r) => r.errorCode)).toEqual([0]);
  } finally {
    c.close();
  }
}

const cli = (...argv: string[]): Promise<CliRun> => clusterMirrors(fjord.bootstrap, ...argv);

interface Row {
  topic: string;
  state: string;
  lag: number;
  errorMessage: string | null;
}

async function partitions(mirror = MIRROR): Promise<Row[]> {
  const r = await cli('--describe', '--mirror', mirror, '--json');
  if (r.code !== 0) throw new Error(r.err);
  return JSON.parse(r.out) as Row[];
}

async function row(topic: string, mirror = MIRROR): Promise<Row | undefined> {
  return (await partitions(mirror)).find((p) => p.topic === topic);
}

function segments(dir: string): Buffer {
  const files = readdirSync(dir).filter((f) => f.endsWith('.log')).sort();
  return Buffer.concat(files.map((f) => readFileSync(join(dir, f))));
}

function segmentBytes(dir: string): number {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.log')).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
  } catch {
    return 0;
  }
}

const kafkaDir = (topic: string): string => join(kafka.dataDir, 'logs', `${topic}-0`);
const fjordDir = (topic: string): string => join(fjord.dataDir, `${topic}-0`);

async function mirroredExactly(topic: string, mirror = MIRROR): Promise<boolean> {
  const r = await row(topic, mirror);
  return r?.state === 'MIRRORING' && r.lag === 0 && segments(fjordDir(topic)).equals(segments(kafkaDir(topic)));
}

async function produce(bootstrap: string, topic: string, from: number, count: number, size = 60): Promise<void> {
  const p = new Kafka({ clientId: 'secure', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).producer({ allowAutoTopicCreation: false });
  await p.connect();
  try {
    for (let i = 0; i < count; i += 500) {
      const n = Math.min(500, count - i);
      await p.send({ topic, acks: -1, messages: Array.from({ length: n }, (_, j) => ({ partition: 0, value: `${topic}-${from + i + j}`.padEnd(size, '~') })) });
    }
  } finally {
    await p.disconnect();
  }
}

async function createTopic(topic: string, records: number): Promise<void> {
  await kafkaAdmin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  if (records > 0) await produce(kafka.bootstrap, topic, 0, records);
}

/** IncrementalAlterConfigs SET (value) or DELETE (null) on one resource of the Fjord node. */
async function alterConfig(resourceType: number, resourceName: string, name: string, value: string | null): Promise<{ errorCode: number; errorMessage: string | null }> {
  const c = await KafkaConnection.connect({ host: '127.0.0.1', port: fjord.port, clientId: 'secure' });
  try {
    const res = await c.request(
      ApiKey.IncrementalAlterConfigs,
      1,
      (w) => encodeIncrementalAlterConfigsRequest(w, { resources: [{ resourceType, resourceName, configs: [{ name, configOperation: value === null ? 1 : 0, value }] }], validateOnly: false }, 1),
      (r) => decodeIncrementalAlterConfigsResponse(r, 1),
    );
    const r = res.responses[0];
    return { errorCode: r?.errorCode ?? -999, errorMessage: r?.errorMessage ?? null };
  } finally {
    c.close();
  }
}

async function describeMirrorConfig(mirror: string): Promise<Map<string, { value: string | null; isSensitive: boolean }>> {
  const c = await KafkaConnection.connect({ host: '127.0.0.1', port: fjord.port, clientId: 'secure' });
  try {
    const res = await c.request(
      ApiKey.DescribeConfigs,
      4,
      (w) => encodeDescribeConfigsRequest(w, { resources: [{ resourceType: ConfigResourceType.CLUSTER_MIRROR, resourceName: mirror, configurationKeys: null }], includeSynonyms: false, includeDocumentation: false }, 4),
      (r) => decodeDescribeConfigsResponse(r, 4),
    );
    return new Map((res.results[0]?.configs ?? []).map((e) => [e.name, { value: e.value, isSensitive: e.isSensitive }]));
  } finally {
    c.close();
  }
}

function mirrorConfigFile(name: string, props: Record<string, string>): string {
  const f = join(pki.dir, `${name}.properties`);
  writeFileSync(f, Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
  return f;
}

describe('a SASL_SSL + SCRAM-SHA-512 Apache Kafka source with ACLs', () => {
  it('mirrors byte for byte, hides the credentials, fails over and restarts from the source', async () => {
    const topic = 'sec-orders';
    await createTopic(topic, 40);
    const props = {
      'bootstrap.servers': `127.0.0.1:${kafka.listenerPorts.SASL_SSL}`,
      'security.protocol': 'SASL_SSL',
      'sasl.mechanism': 'SCRAM-SHA-512',
      'sasl.jaas.config': SCRAM_JAAS(PASSWORD),
      'ssl.truststore.location': pki.truststoreJks,
      'ssl.truststore.password': STORE_PASSWORD,
      'mirror.fetch.wait.max.ms': '100',
    };
    const cfg = mirrorConfigFile(MIRROR, props);
    const noStore = mirrorConfigFile('no-store', { ...props, 'ssl.truststore.location': join(pki.dir, 'missing.jks') });
    const refused = await cli('--create', '--mirror', 'no-store', '--mirror-config', noStore);
    expect(refused.code).not.toBe(0);
    expect(refused.err).toMatch(/INVALID_CONFIG.*cannot read ssl.truststore.location/s);
    expect(await cli('--create', '--mirror', MIRROR, '--mirror-config', cfg)).toMatchObject({ code: 0 });
    expect((await cli('--start', '--mirror', MIRROR, '--topics', topic)).out).toBe(`Started mirroring of topic ${topic}.`);
    await waitFor('mirrored', () => mirroredExactly(topic));
    await produce(kafka.bootstrap, topic, 40, 20);
    await waitFor('caught up again', () => mirroredExactly(topic));

    const described = await describeMirrorConfig(MIRROR);
    expect(described.get('sasl.jaas.config')).toEqual({ value: null, isSensitive: true });
    expect(described.get('ssl.truststore.password')).toEqual({ value: null, isSensitive: true });
    expect(described.get('sasl.mechanism')).toEqual({ value: 'SCRAM-SHA-512', isSensitive: false });

    // Failover: stopped, the topic takes writes here.
    expect((await cli('--stop', '--mirror', MIRROR, '--topics', topic)).code).toBe(0);
    await waitFor('stopped', async () => (await row(topic))?.state === 'STOPPED');
    await produce(fjord.bootstrap, topic, 1000, 3);
    expect(segments(fjordDir(topic)).equals(segments(kafkaDir(topic)))).toBe(false);

    // Restart from the source: the copy written to since is truncated and mirrored again.
    expect((await cli('--start', '--mirror', MIRROR, '--topics', topic)).code).toBe(0);
    await produce(kafka.bootstrap, topic, 60, 5);
    await waitFor('mirrored again after the restart', () => mirroredExactly(topic));
  });

  it('fails a topic it may not READ with TOPIC_AUTHORIZATION_FAILED, and mirrors it once READ is granted', async () => {
    const topic = 'locked';
    await createTopic(topic, 10);
    expect((await cli('--start', '--mirror', MIRROR, '--topics', topic)).code).toBe(0);
    await waitFor('failed for want of READ', async () => {
      const r = await row(topic);
      return r?.state === 'FAILED' && /TOPIC_AUTHORIZATION_FAILED/.test(r.errorMessage ?? '');
    });
    expect((await cli('--describe', '--mirror', MIRROR, '--failed')).out).toMatch(/locked\s+0\s+.*FAILED\s+MIRRORING\s+\d+\s+TOPIC_AUTHORIZATION_FAILED/);
    await kafkaAdmin.createAcls({
      acl: [{ resourceType: AclResourceTypes.TOPIC, resourceName: topic, resourcePatternType: ResourcePatternTypes.LITERAL, principal: `User:${USER}`, host: '*', operation: AclOperationTypes.READ, permissionType: AclPermissionTypes.ALLOW }],
    });
    await waitFor('mirrored once READ is granted', () => mirroredExactly(topic));
  });

  it('shows a wrong password as SASL_AUTHENTICATION_FAILED; fixing it reconnects and resumes with no gap', async () => {
    const topic = 'sec-orders';
    expect(await mirroredExactly(topic)).toBe(true);
    expect(await alterConfig(ConfigResourceType.CLUSTER_MIRROR, MIRROR, 'sasl.jaas.config', SCRAM_JAAS('wrong-password'))).toEqual({ errorCode: 0, errorMessage: null });
    await waitFor('failed with the authentication error', async () => {
      const r = await row(topic);
      return r?.state === 'FAILED' && /SASL_AUTHENTICATION_FAILED/.test(r.errorMessage ?? '');
    });
    await produce(kafka.bootstrap, topic, 65, 10);
    // Settings the mirror could not connect with at all are refused, and change nothing.
    const noLogin = await alterConfig(ConfigResourceType.CLUSTER_MIRROR, MIRROR, 'sasl.jaas.config', null);
    expect(noLogin.errorCode).toBe(ErrorCode.INVALID_CONFIG);
    expect(noLogin.errorMessage).toMatch(/sasl.jaas.config is required/);
    expect(await alterConfig(ConfigResourceType.CLUSTER_MIRROR, MIRROR, 'sasl.jaas.config', SCRAM_JAAS(PASSWORD))).toEqual({ errorCode: 0, errorMessage: null });
    await waitFor('resumed with the right password', () => mirroredExactly(topic));
  });

  it('starts topics by pattern: the node, which holds the hidden credentials, discovers them', async () => {
    const topic = 'sec-discovered';
    await createTopic(topic, 7);
    expect(await cli('--start', '--mirror', MIRROR, '--topics', 'sec-disc.*')).toEqual({
      code: 0,
      out: 'The patterns were saved; the node starts the source topics they match as it discovers them.',
      err: '',
    });
    await waitFor('discovered and mirrored', () => mirroredExactly(topic));
  });

  it('mirrors from an SSL listener that requires a client certificate (mTLS)', async () => {
    const topic = 'mtls-payments';
    await createTopic(topic, 25);
    const cfg = mirrorConfigFile('mtls', {
      'bootstrap.servers': `127.0.0.1:${kafka.listenerPorts.MTLS}`,
      'security.protocol': 'SSL',
      'ssl.truststore.location': pki.truststoreP12,
      'ssl.truststore.type': 'PKCS12',
      'ssl.truststore.password': STORE_PASSWORD,
      'ssl.keystore.location': pki.client.jks,
      'ssl.keystore.password': STORE_PASSWORD,
      'ssl.key.password': STORE_PASSWORD,
      'mirror.fetch.wait.max.ms': '100',
    });
    expect((await cli('--create', '--mirror', 'mtls', '--mirror-config', cfg)).code).toBe(0);
    expect((await cli('--start', '--mirror', 'mtls', '--topics', topic)).code).toBe(0);
    await waitFor('mirrored over mTLS', () => mirroredExactly(topic, 'mtls'));
  });

  it('holds catch-up near mirror.replication.throttled.rate, set at run time', async () => {
    const topic = 'sec-bulk';
    const rate = 512 * 1024;
    await createTopic(topic, 0);
    await produce(kafka.bootstrap, topic, 0, 3000, 1000);
    const total = segmentBytes(kafkaDir(topic));
    expect(await alterConfig(BROKER_RESOURCE, '', 'mirror.replication.throttled.rate', String(rate))).toEqual({ errorCode: 0, errorMessage: null });
    expect(await alterConfig(ConfigResourceType.CLUSTER_MIRROR, MIRROR, 'mirror.fetch.max.bytes', String(128 * 1024))).toEqual({ errorCode: 0, errorMessage: null });
    expect((await cli('--start', '--mirror', MIRROR, '--topics', topic)).code).toBe(0);
    // Rate between the first bytes and the end of catch-up (the first response is never held back).
    let first: { t: number; bytes: number } | null = null;
    await waitFor(
      'caught up under the throttle',
      () => {
        const bytes = segmentBytes(fjordDir(topic));
        if (first === null && bytes > 0) first = { t: Date.now(), bytes };
        return bytes >= total;
      },
      60_000,
    );
    const start = first as { t: number; bytes: number } | null;
    expect(start).not.toBeNull();
    const measured = ((total - start!.bytes) * 1000) / (Date.now() - start!.t);
    console.log(`mirror catch-up under mirror.replication.throttled.rate=${rate}: ${Math.round(measured)} bytes/s (${(measured / rate).toFixed(2)}x the rate) for ${total} bytes`);
    expect(measured).toBeGreaterThan(rate * 0.5);
    expect(measured).toBeLessThan(rate * 1.5);
    await waitFor('byte for byte', () => mirroredExactly(topic));
    expect(await alterConfig(BROKER_RESOURCE, '', 'mirror.replication.throttled.rate', null)).toEqual({ errorCode: 0, errorMessage: null });
  }, 90_000);
});
