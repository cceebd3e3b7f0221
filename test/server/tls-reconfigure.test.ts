/**
 * Dynamic SSL reconfiguration, as Kafka's `kafka-configs --entity-type brokers --entity-name <id>
 * --add-config listener.name.<l>.ssl.keystore.location=...` does it: an AlterConfigs from a real
 * client (kafkajs, over the PLAINTEXT listener) of the SSL listener's key store makes new TLS
 * connections get the new certificate, a connection opened before stays up, and a key store that
 * does not load, or whose subject changes without `ssl.allow.dn.changes=true`, is refused with
 * INVALID_CONFIG while the current one keeps serving.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { ConfigResourceTypes, Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_PASSWORD, makeTestPki, type TestPki } from './tls-fixtures.js';
import { startSecureNode, type SecureNode } from './secure-node.js';

/** An ApiVersions v0 request frame (correlation id 7, null client id). */
const API_VERSIONS_V0 = Buffer.from([0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 7, 0xff, 0xff]);

let pki: TestPki;
let node: SecureNode;
let admin: Admin;

function openTls(listener = 'SSL'): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port: node.port(listener), ca: pki.caPem, servername: 'localhost' }, () => resolve(s));
    s.once('error', reject);
  });
}

function subjectOf(s: TLSSocket): string {
  return String(s.getPeerCertificate().subject.CN);
}

/** Sends ApiVersions and resolves with the first bytes of the answer. */
function answers(s: TLSSocket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    s.once('data', resolve);
    s.once('close', () => reject(new Error('connection closed')));
    s.write(API_VERSIONS_V0);
  });
}

async function setKeystore(location: string, listener = 'ssl'): Promise<void> {
  await admin.alterConfigs({
    validateOnly: false,
    resources: [
      {
        type: ConfigResourceTypes.BROKER,
        name: '1',
        configEntries: [
          { name: `listener.name.${listener}.ssl.keystore.location`, value: location },
          { name: `listener.name.${listener}.ssl.keystore.password`, value: STORE_PASSWORD },
          { name: `listener.name.${listener}.ssl.keystore.type`, value: 'PKCS12' },
        ],
      },
    ],
  });
}

beforeAll(async () => {
  pki = makeTestPki();
  node = await startSecureNode({
    listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,STRICT://127.0.0.1:0',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SSL:SSL,STRICT:SSL',
    // The rotated certificate has another subject, which Kafka allows only when asked to.
    'listener.name.ssl.ssl.allow.dn.changes': 'true',
    'listener.name.strict.ssl.keystore.type': 'PKCS12',
    'listener.name.strict.ssl.keystore.location': pki.server.p12,
    'listener.name.strict.ssl.keystore.password': STORE_PASSWORD,
    'listener.name.ssl.ssl.keystore.type': 'PKCS12',
    'listener.name.ssl.ssl.keystore.location': pki.server.p12,
    'listener.name.ssl.ssl.keystore.password': STORE_PASSWORD,
  });
  admin = new Kafka({ clientId: 'tls-reconfigure', brokers: [`127.0.0.1:${node.port('PLAINTEXT')}`], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
  await admin.connect();
}, 60_000);

afterAll(async () => {
  await admin?.disconnect();
  await node?.close();
  pki?.cleanup();
});

describe('listener SSL reconfiguration through AlterConfigs', () => {
  it('serves new connections with the new certificate and keeps open ones', async () => {
    const before = await openTls();
    expect(subjectOf(before)).toBe('broker1');
    const rotated = pki.issueServer('rotated', 'broker1-rotated');
    await setKeystore(rotated.p12);
    const after = await openTls();
    expect(subjectOf(after)).toBe('broker1-rotated');
    expect((await answers(after)).length).toBeGreaterThan(0);
    // The connection opened before the change is still served, with its old session.
    expect(subjectOf(before)).toBe('broker1');
    expect((await answers(before)).length).toBeGreaterThan(0);
    before.destroy();
    after.destroy();
  });

  it('refuses a key store that does not load with INVALID_CONFIG and keeps the current one', async () => {
    const garbage = join(pki.dir, 'garbage.p12');
    writeFileSync(garbage, 'not a key store');
    const err = await setKeystore(garbage).then(
      () => null,
      (e: unknown) => e as { type?: string; code?: number },
    );
    expect(err).toMatchObject({ type: 'INVALID_CONFIG', code: 40 });
    const s = await openTls();
    expect(subjectOf(s)).toBe('broker1-rotated');
    expect((await answers(s)).length).toBeGreaterThan(0);
    s.destroy();
    const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.BROKER, name: '1' }] });
    const entries = described.resources[0]!.configEntries;
    expect(entries.find((e) => e.configName === 'listener.name.ssl.ssl.keystore.location')?.configValue).not.toBe(garbage);
    // The listener's key store password is a password: DescribeConfigs does not show it.
    const password = entries.find((e) => e.configName === 'listener.name.ssl.ssl.keystore.password');
    expect(password?.isSensitive).toBe(true);
    expect(password?.configValue ?? null).toBeNull();
  });

  it('refuses a certificate with another subject unless ssl.allow.dn.changes allows it, as Kafka does', async () => {
    const other = pki.issueServer('strict-other', 'someone-else');
    const err = await setKeystore(other.p12, 'strict').then(
      () => null,
      (e: unknown) => e as { type?: string; code?: number },
    );
    expect(err).toMatchObject({ type: 'INVALID_CONFIG', code: 40 });
    const s = await openTls('STRICT');
    expect(subjectOf(s)).toBe('broker1');
    s.destroy();
  });
});
