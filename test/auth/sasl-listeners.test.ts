/**
 * SASL on SASL_PLAINTEXT and SASL_SSL listeners: kafkajs produces and consumes with PLAIN,
 * SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER; bad credentials, SCRAM nonce tampering, expired
 * or foreign tokens, unauthenticated requests, v0 raw-token framing, re-authentication and the
 * authentication timeout, each over a raw connection with the exact Kafka error codes.
 */
import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Kafka, logLevel, type SASLOptions } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roundTrip } from '../helpers/round-trip.js';
import { makeTestPki, type TestPki } from '../server/tls-fixtures.js';
import { startSecureNode, type SecureNode } from '../server/secure-node.js';
import { SaslWire, addScramUser, bareTokenLogin, makeOAuthIssuer, plainToken, type OAuthIssuer } from './sasl-helpers.js';
import type { ConnectionOptions } from 'node:tls';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";';
const SASL_AUTHENTICATION_FAILED = 58;
const UNSUPPORTED_SASL_MECHANISM = 33;
const ILLEGAL_SASL_STATE = 34;

let pki: TestPki;
let node: SecureNode;
let oauth: OAuthIssuer;

beforeAll(async () => {
  pki = makeTestPki();
  oauth = await makeOAuthIssuer(join(pki.dir, 'jwks.json'));
  node = await startSecureNode({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,REAUTH://127.0.0.1:0',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,REAUTH:SASL_PLAINTEXT',
    'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
    'listener.name.sasl_ssl.sasl.enabled.mechanisms': 'PLAIN,OAUTHBEARER',
    'listener.name.sasl_ssl.plain.sasl.jaas.config': JAAS,
    'listener.name.sasl_ssl.ssl.keystore.location': pki.server.pemFile,
    'listener.name.sasl_ssl.ssl.keystore.type': 'PEM',
    'sasl.oauthbearer.jwks.endpoint.url': pathToFileURL(oauth.jwksFile).href,
    'sasl.oauthbearer.expected.audience': 'fjord',
    'sasl.oauthbearer.expected.issuer': 'https://issuer.test',
    'listener.name.reauth.sasl.enabled.mechanisms': 'PLAIN',
    'listener.name.reauth.plain.sasl.jaas.config': JAAS,
    'listener.name.reauth.connections.max.reauth.ms': '1500',
    'fjord.authentication.timeout.ms': '1500',
    'connection.failed.authentication.delay.ms': '20',
  });
  await addScramUser(node.port('PLAINTEXT'), 'scram256', 'pw-256', 1);
  await addScramUser(node.port('PLAINTEXT'), 'scram512', 'pw-512', 2, 8192);
});

afterAll(async () => {
  await node?.close();
  pki?.cleanup();
});

const tls = (): ConnectionOptions => ({ ca: [pki.caPem], servername: 'localhost' });

/**
 * A real client with room to retry: its first produce auto-creates the topic, which a node answers
 * UNKNOWN_TOPIC_OR_PARTITION for until the creation lands (as Kafka does), a while on a busy machine.
 */
function client(port: number, sasl: SASLOptions, ssl?: ConnectionOptions): Kafka {
  return new Kafka({ clientId: 'sasl-test', brokers: [`127.0.0.1:${port}`], sasl, ...(ssl ? { ssl } : {}), logLevel: logLevel.NOTHING, retry: { retries: 5 } });
}

/** Two records, `<topic>-1` and `<topic>-2`, written and read back. */
const roundTripOfTwo = (kafka: Kafka, topic: string): Promise<string[]> => roundTrip(kafka, topic, [`${topic}-1`, `${topic}-2`]);

/** Client side of SCRAM (RFC 5802) for the raw tests. */
function scramClientFinal(serverFirst: string, clientFirstBare: string, password: string, hash: 'sha256' | 'sha512', nonceOverride?: string): string {
  const attrs = new Map(serverFirst.split(',').map((p) => [p[0]!, p.slice(2)]));
  const salted = pbkdf2Sync(password, Buffer.from(attrs.get('s')!, 'base64'), Number(attrs.get('i')), hash === 'sha256' ? 32 : 64, hash);
  const clientKey = createHmac(hash, salted).update('Client Key').digest();
  const storedKey = createHash(hash).update(clientKey).digest();
  const withoutProof = `c=biws,r=${nonceOverride ?? attrs.get('r')!}`;
  const sig = createHmac(hash, storedKey).update(`${clientFirstBare},${serverFirst},${withoutProof}`).digest();
  const proof = Buffer.from(clientKey.map((b, i) => b ^ sig[i]!));
  return `${withoutProof},p=${proof.toString('base64')}`;
}

describe('SASL with real clients', () => {
  it('PLAIN over SASL_PLAINTEXT', async () => {
    expect(await roundTripOfTwo(client(node.port('SASL_PLAINTEXT'), { mechanism: 'plain', username: 'alice', password: 'alice-secret' }), 'sasl-plain')).toEqual(['sasl-plain-1', 'sasl-plain-2']);
  });

  it('SCRAM-SHA-256 and SCRAM-SHA-512 with credentials from AlterUserScramCredentials', async () => {
    const port = node.port('SASL_PLAINTEXT');
    expect(await roundTripOfTwo(client(port, { mechanism: 'scram-sha-256', username: 'scram256', password: 'pw-256' }), 'scram-256')).toHaveLength(2);
    expect(await roundTripOfTwo(client(port, { mechanism: 'scram-sha-512', username: 'scram512', password: 'pw-512' }), 'scram-512')).toHaveLength(2);
  });

  it('PLAIN and OAUTHBEARER over SASL_SSL', async () => {
    const port = node.port('SASL_SSL');
    expect(await roundTripOfTwo(client(port, { mechanism: 'plain', username: 'admin', password: 'admin-secret' }, tls()), 'sasl-ssl-plain')).toHaveLength(2);
    const token = await oauth.token({ sub: 'svc-orders', aud: 'fjord', iss: 'https://issuer.test' });
    const kafka = client(port, { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: token }) }, tls());
    expect(await roundTripOfTwo(kafka, 'sasl-ssl-oauth')).toHaveLength(2);
  });

  it('a wrong password is refused by the client library with an authentication error', async () => {
    const admin = client(node.port('SASL_PLAINTEXT'), { mechanism: 'scram-sha-256', username: 'scram256', password: 'nope' }).admin();
    await expect(admin.connect()).rejects.toThrow(/SASL SCRAM SHA256 authentication failed|authentication/i);
  });
});

describe('SASL on the wire', () => {
  it('PLAIN with a wrong password: SASL_AUTHENTICATION_FAILED, then the connection is closed', async () => {
    const c = await SaslWire.connect(node.port('SASL_PLAINTEXT'));
    expect((await c.handshake('PLAIN')).errorCode).toBe(0);
    const res = await c.authenticate(plainToken('alice', 'wrong'));
    expect(res.errorCode).toBe(SASL_AUTHENTICATION_FAILED);
    expect(res.errorMessage).toContain('PLAIN');
    await c.closed;
  });

  it('PLAIN with another authorization id is refused', async () => {
    const c = await SaslWire.connect(node.port('SASL_PLAINTEXT'));
    await c.handshake('PLAIN');
    expect((await c.authenticate(plainToken('alice', 'alice-secret', 'admin'))).errorCode).toBe(SASL_AUTHENTICATION_FAILED);
    await c.closed;
  });

  it('SCRAM: an unknown user gets a salt and iteration count like a real one, and fails at the proof', async () => {
    const c = await SaslWire.connect(node.port('SASL_PLAINTEXT'));
    await c.handshake('SCRAM-SHA-256');
    const bare = 'n=ghost,r=clientnonce123';
    const first = await c.authenticate(Buffer.from(`n,,${bare}`));
    expect(first.errorCode).toBe(0);
    const serverFirst = first.authBytes.toString();
    expect(serverFirst).toMatch(/^r=clientnonce123[^,]+,s=[A-Za-z0-9+/=]+,i=4096$/);
    const final = await c.authenticate(Buffer.from(scramClientFinal(serverFirst, bare, 'anything', 'sha256')));
    expect(final.errorCode).toBe(SASL_AUTHENTICATION_FAILED);
    await c.closed;
  });

  it('SCRAM: a tampered nonce is refused even with the right password', async () => {
    const c = await SaslWire.connect(node.port('SASL_PLAINTEXT'));
    await c.handshake('SCRAM-SHA-512');
    const bare = 'n=scram512,r=abcdef';
    const first = await c.authenticate(Buffer.from(`n,,${bare}`));
    const final = await c.authenticate(Buffer.from(scramClientFinal(first.authBytes.toString(), bare, 'pw-512', 'sha512', 'abcdefXYZ')));
    expect(final.errorCode).toBe(SASL_AUTHENTICATION_FAILED);
    expect(final.errorMessage).toContain('nonce');
    await c.closed;
  });

  it('SCRAM: the right password completes with the server signature', async () => {
    const c = await SaslWire.connect(node.port('SASL_PLAINTEXT'));
    await c.handshake('SCRAM-SHA-512');
    const bare = 'n=scram512,r=fedcba';
    const first = await c.authenticate(Buffer.from(`n,,${bare}`));
    expect(first.authBytes.toString()).toContain(',i=8192');
    const final = await c.authenticate(Buffer.from(scramClientFinal(first.authBytes.toString(), bare, 'pw-512', 'sha512')));
    expect(final.errorCode).toBe(0);
    expect(final.authBytes.toString()).toMatch(/^v=/);
    expect(await c.metadata()).toBe(1);
    c.close();
  });

  it('OAUTHBEARER: an expired token and a token for another audience leave the connection unusable', async () => {
    // As against Kafka, kafkajs takes the RFC 7628 error challenge for success; the node then
    // refuses the connection's first request, so the client can do nothing with it.
    for (const token of [
      await oauth.token({ sub: 'svc', aud: 'fjord', iss: 'https://issuer.test', expiresInSeconds: -3600 }),
      await oauth.token({ sub: 'svc', aud: 'someone-else', iss: 'https://issuer.test' }),
      await oauth.token({ sub: 'svc', aud: 'fjord', iss: 'https://elsewhere.test' }),
    ]) {
      const admin = client(node.port('SASL_SSL'), { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: token }) }, tls()).admin();
      await expect(admin.connect().then(() => admin.listTopics())).rejects.toThrow();
      await admin.disconnect();
    }
  });

  it('before authentication only ApiVersions and the SASL requests are served', async () => {
    const c = await SaslWire.connect(node.port('SASL_PLAINTEXT'));
    expect(await c.apiVersions()).toBe(0);
    await expect(c.metadata()).rejects.toThrow('closed');
  });

  it('an unknown mechanism: UNSUPPORTED_SASL_MECHANISM with the enabled ones, then closed', async () => {
    const c = await SaslWire.connect(node.port('SASL_PLAINTEXT'));
    const res = await c.handshake('GSSAPI');
    expect(res.errorCode).toBe(UNSUPPORTED_SASL_MECHANISM);
    expect(res.mechanisms).toEqual(['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']);
    await c.closed;
  });

  it('SaslHandshake on a PLAINTEXT listener: ILLEGAL_SASL_STATE', async () => {
    const c = await SaslWire.connect(node.port('PLAINTEXT'));
    expect((await c.handshake('PLAIN')).errorCode).toBe(ILLEGAL_SASL_STATE);
    c.close();
  });

  it('a v0 handshake takes the PLAIN token as a bare frame, and answers with a bare empty token', async () => {
    const { replySize, socket } = await bareTokenLogin(node.port('SASL_PLAINTEXT'), plainToken('alice', 'alice-secret'));
    expect(replySize).toBe(0);
    // Authenticated: a Metadata request is answered.
    const req = Buffer.from([0, 3, 0, 1, 0, 0, 0, 9, 0xff, 0xff, 0, 0, 0, 0]);
    socket.write(Buffer.concat([Buffer.from([0, 0, 0, req.length]), req]));
    const answer = await new Promise<Buffer>((r) => socket.once('data', r));
    expect(answer.readInt32BE(4)).toBe(9);
    socket.destroy();
  });

  it('a bare v0 token with a wrong password closes the connection', async () => {
    const { replySize } = await bareTokenLogin(node.port('SASL_PLAINTEXT'), plainToken('alice', 'wrong'));
    expect(replySize).toBeNull();
  });

  it('KIP-368: SessionLifetimeMs is reported; past it a request closes the connection; re-authenticating keeps it', async () => {
    const port = node.port('REAUTH');
    const lapsed = await SaslWire.connect(port);
    await lapsed.handshake('PLAIN');
    const res = await lapsed.authenticate(plainToken('alice', 'alice-secret'), 1);
    expect(res.errorCode).toBe(0);
    expect(res.sessionLifetimeMs).toBe(1500n);
    const renewed = await SaslWire.connect(port);
    await renewed.handshake('PLAIN');
    await renewed.authenticate(plainToken('alice', 'alice-secret'), 1);
    // Fixed waits, as the lifetime passing is what is tested: re-authenticate inside the first
    // 1.5 s, then go past it for the lapsed connection while the renewed one is inside its second.
    await new Promise((r) => setTimeout(r, 900));
    expect((await renewed.handshake('PLAIN')).errorCode).toBe(0);
    expect((await renewed.authenticate(plainToken('alice', 'alice-secret'), 1)).errorCode).toBe(0);
    await new Promise((r) => setTimeout(r, 900));
    await expect(lapsed.metadata()).rejects.toThrow('closed');
    expect(await renewed.metadata()).toBe(1);
    renewed.close();
  });

  it('re-authenticating as another user is refused', async () => {
    const c = await SaslWire.connect(node.port('REAUTH'));
    await c.handshake('PLAIN');
    await c.authenticate(plainToken('alice', 'alice-secret'), 1);
    await c.handshake('PLAIN');
    expect((await c.authenticate(plainToken('admin', 'admin-secret'), 1)).errorCode).toBe(SASL_AUTHENTICATION_FAILED);
    await c.closed;
  });

  it('a client that never finishes the handshake is dropped', async () => {
    const c = await SaslWire.connect(node.port('SASL_PLAINTEXT'));
    await c.handshake('PLAIN');
    await c.closed;
  });
});
