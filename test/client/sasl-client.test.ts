/**
 * The client's SASL and TLS, built from Kafka client keys the way a cluster mirror's config gives
 * them, against a node's real SASL_PLAINTEXT, SASL_SSL and re-authenticating listeners over
 * loopback: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER with a token file and with a token
 * endpoint, re-authentication before the session lifetime ends (KIP-368), and the refusals a user
 * sees as Kafka error codes (a wrong password, a mechanism the listener does not offer, an
 * untrusted broker certificate, a missing JAAS config).
 */
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Apis } from '../../src/client/apis.js';
import { clientOptionsFromConfig } from '../../src/client/client-options.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { KafkaConnection } from '../../src/client/kafka-connection.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { KafkaError } from '../../src/protocol/kafka-error.js';
import { addScramUser, makeOAuthIssuer, type OAuthIssuer } from '../auth/sasl-helpers.js';
import { startSecureNode, type SecureNode } from '../server/secure-node.js';
import { STORE_PASSWORD, makeTestPki, type TestPki } from '../server/tls-fixtures.js';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";';
const plainJaas = (user: string, password: string): string => `org.apache.kafka.common.security.plain.PlainLoginModule required username="${user}" password="${password}";`;
const scramJaas = (user: string, password: string): string => `org.apache.kafka.common.security.scram.ScramLoginModule required username="${user}" password="${password}";`;
const OAUTH_JAAS = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="fjord-mirror" clientSecret="s3cret";';

let pki: TestPki;
let node: SecureNode;
let oauth: OAuthIssuer;
let tokenEndpoint: Server;
let tokenUrl = '';
let clusterId: string | null = null;

beforeAll(async () => {
  pki = makeTestPki();
  oauth = await makeOAuthIssuer(join(pki.dir, 'jwks.json'));
  node = await startSecureNode({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,REAUTH://127.0.0.1:0',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,REAUTH:SASL_PLAINTEXT',
    'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
    'listener.name.sasl_ssl.sasl.enabled.mechanisms': 'OAUTHBEARER',
    'ssl.keystore.type': 'PKCS12',
    'ssl.keystore.location': pki.server.p12,
    'ssl.keystore.password': STORE_PASSWORD,
    'sasl.oauthbearer.jwks.endpoint.url': pathToFileURL(oauth.jwksFile).href,
    'sasl.oauthbearer.expected.audience': 'fjord',
    'sasl.oauthbearer.expected.issuer': 'https://issuer.test',
    'listener.name.reauth.sasl.enabled.mechanisms': 'PLAIN',
    'listener.name.reauth.plain.sasl.jaas.config': JAAS,
    // Long enough that the client's re-authentication at 85–95 % of it (150–450 ms before the end)
    // is not missed by a loaded machine's event-loop stalls; the test then runs three lifetimes.
    'listener.name.reauth.connections.max.reauth.ms': '3000',
    'connection.failed.authentication.delay.ms': '20',
  });
  const plain = new KafkaClient({ bootstrapServers: [`127.0.0.1:${node.port('PLAINTEXT')}`], clientId: 'sasl-client-test' });
  clusterId = (await plain.metadata([])).clusterId;
  plain.close();
  await addScramUser(node.port('PLAINTEXT'), 'bob', 'bob-256', 1);
  await addScramUser(node.port('PLAINTEXT'), 'carol', 'carol-512', 2, 8192);
  // A client_credentials token endpoint that knows one client.
  tokenEndpoint = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const expected = `Basic ${Buffer.from('fjord-mirror:s3cret').toString('base64')}`;
      if (req.headers.authorization !== expected || !body.includes('grant_type=client_credentials')) {
        res.writeHead(401).end('{"error":"invalid_client"}');
        return;
      }
      void oauth.token({ sub: 'mirror', aud: 'fjord', iss: 'https://issuer.test' }).then((t) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: t, token_type: 'bearer' })));
    });
  });
  await new Promise<void>((r) => tokenEndpoint.listen(0, '127.0.0.1', r));
  const a = tokenEndpoint.address();
  tokenUrl = `http://127.0.0.1:${typeof a === 'object' && a !== null ? a.port : 0}/token`;
});

afterAll(async () => {
  tokenEndpoint?.close();
  await node?.close();
  pki?.cleanup();
});

function clientFor(listener: string, cfg: Record<string, string>): KafkaClient {
  return new KafkaClient(clientOptionsFromConfig(new Map(Object.entries({ 'bootstrap.servers': `127.0.0.1:${node.port(listener)}`, ...cfg })), 'sasl-client-test'));
}

/** Metadata through the client; resolves with the cluster id, or rejects with the failure. */
async function clusterIdVia(listener: string, cfg: Record<string, string>): Promise<string | null> {
  const client = clientFor(listener, cfg);
  try {
    return (await client.metadata([])).clusterId;
  } finally {
    client.close();
  }
}

async function failureVia(listener: string, cfg: Record<string, string>): Promise<KafkaError> {
  const err = await clusterIdVia(listener, cfg).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KafkaError);
  return err as KafkaError;
}

const trust = (): Record<string, string> => ({ 'ssl.truststore.location': pki.truststoreJks, 'ssl.truststore.password': STORE_PASSWORD });

describe('SASL from client configs', () => {
  it('logs in with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 over SASL_PLAINTEXT', async () => {
    const id = clusterId;
    expect(id).toMatch(/.+/);
    expect(await clusterIdVia('SASL_PLAINTEXT', { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.jaas.config': plainJaas('alice', 'alice-secret') })).toBe(id);
    expect(await clusterIdVia('SASL_PLAINTEXT', { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'SCRAM-SHA-256', 'sasl.jaas.config': scramJaas('bob', 'bob-256') })).toBe(id);
    expect(await clusterIdVia('SASL_PLAINTEXT', { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'SCRAM-SHA-512', 'sasl.jaas.config': scramJaas('carol', 'carol-512') })).toBe(id);
  });

  it('logs in with OAUTHBEARER over SASL_SSL, with a token file and with a token endpoint', async () => {
    const tokenFile = join(pki.dir, 'token.jwt');
    writeFileSync(tokenFile, await oauth.token({ sub: 'mirror', aud: 'fjord', iss: 'https://issuer.test' }));
    const base = { ...trust(), 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'OAUTHBEARER', 'sasl.jaas.config': OAUTH_JAAS };
    expect(await clusterIdVia('SASL_SSL', { ...base, 'sasl.oauthbearer.token.endpoint.url': pathToFileURL(tokenFile).href })).toBe(clusterId);
    expect(await clusterIdVia('SASL_SSL', { ...base, 'sasl.oauthbearer.token.endpoint.url': tokenUrl })).toBe(clusterId);
    writeFileSync(tokenFile, await oauth.token({ sub: 'mirror', aud: 'someone-else', iss: 'https://issuer.test' }));
    expect((await failureVia('SASL_SSL', { ...base, 'sasl.oauthbearer.token.endpoint.url': pathToFileURL(tokenFile).href })).code).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
  });

  it('refuses a wrong password, an unoffered mechanism, an untrusted broker and a missing JAAS config with Kafka error codes', async () => {
    const wrong = await failureVia('SASL_PLAINTEXT', { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'SCRAM-SHA-512', 'sasl.jaas.config': scramJaas('carol', 'nope') });
    expect(wrong.code).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(wrong.message).toMatch(/^SASL_AUTHENTICATION_FAILED: /);
    const mech = await failureVia('SASL_SSL', { ...trust(), 'security.protocol': 'SASL_SSL', 'sasl.jaas.config': plainJaas('alice', 'alice-secret') });
    expect(mech.code).toBe(ErrorCode.UNSUPPORTED_SASL_MECHANISM);
    expect(mech.message).toContain('OAUTHBEARER');
    // No trust store: the node's certificate is not from a CA Node trusts.
    const untrusted = await failureVia('SASL_SSL', { 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'OAUTHBEARER', 'sasl.jaas.config': OAUTH_JAAS, 'sasl.oauthbearer.token.endpoint.url': tokenUrl });
    expect(untrusted.code).toBe(ErrorCode.NETWORK_EXCEPTION);
    expect(() => clientFor('SASL_PLAINTEXT', { 'security.protocol': 'SASL_PLAINTEXT' })).toThrow(/sasl.jaas.config is required/);
  });

  it('re-authenticates on the same connection before the session lifetime ends', async () => {
    const opts = clientOptionsFromConfig(new Map([['bootstrap.servers', 'x:1'], ['security.protocol', 'SASL_PLAINTEXT'], ['sasl.jaas.config', plainJaas('alice', 'alice-secret')]]), 'reauth');
    const conn = await KafkaConnection.connect({ host: '127.0.0.1', port: node.port('REAUTH'), clientId: 'reauth', authenticate: opts.authenticate! });
    try {
      // Requests keep flowing over three session lifetimes: without re-authentication the node
      // closes the connection after one.
      const api = Apis.DescribeCluster;
      const until = Date.now() + 9000;
      let answered = 0;
      while (Date.now() < until) {
        const res = await Promise.all([0, 1, 2].map(() => conn.request(api.apiKey, 0, (w) => api.encode(w, { includeClusterAuthorizedOperations: false }, 0), (r) => api.decode(r, 0))));
        for (const r of res) expect(r.clusterId).toBe(clusterId);
        answered += res.length;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(answered).toBeGreaterThan(90);
      expect(conn.isClosed).toBe(false);
    } finally {
      conn.close();
    }
  });
});
