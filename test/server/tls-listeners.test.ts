/**
 * SSL listeners beside a PLAINTEXT one on one node, with a real client (kafkajs) over TLS: key
 * stores in PEM, PKCS12 and JKS, mutual TLS, refusal of untrusted certificates and of plaintext
 * on a TLS port, per-listener advertised addresses, and certificate reload.
 */
import { X509Certificate } from 'node:crypto';
import { copyFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WireClient } from '../broker/wire.js';
import { STORE_PASSWORD, makeTestPki, type TestPki } from './tls-fixtures.js';
import { startSecureNode, type SecureNode } from './secure-node.js';
import { join } from 'node:path';
import { Reader } from '../../src/protocol/reader.js';
import { decodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { freePort } from '../helpers/node.js';
import { roundTrip } from '../helpers/round-trip.js';
import { waitFor } from '../helpers/wait.js';
import { scrape, total } from '../metrics/scrape.js';

/** An ApiVersions v0 request frame (correlation id 7, null client id). */
const API_VERSIONS_V0 = Buffer.from([0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 7, 0xff, 0xff]);

let pki: TestPki;
let node: SecureNode;
let reloadingKeystore: string;
let metrics: number;

beforeAll(async () => {
  pki = makeTestPki();
  reloadingKeystore = join(pki.dir, 'reloading.p12');
  copyFileSync(pki.server.p12, reloadingKeystore);
  metrics = await freePort();
  node = await startSecureNode({
    'metrics.listener': `http://127.0.0.1:${metrics}`,
    listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,MTLS://127.0.0.1:0,JKS://127.0.0.1:0,RELOAD://127.0.0.1:0',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,JKS:SSL,RELOAD:SSL',
    // SSL: PEM key store given inline (KIP-651).
    'listener.name.ssl.ssl.keystore.type': 'PEM',
    'listener.name.ssl.ssl.keystore.certificate.chain': pki.server.certPem,
    'listener.name.ssl.ssl.keystore.key': pki.server.keyPem,
    // MTLS: PKCS12 key store, JKS trust store, client certificates required, mapped to the CN.
    'listener.name.mtls.ssl.keystore.type': 'PKCS12',
    'listener.name.mtls.ssl.keystore.location': pki.server.p12,
    'listener.name.mtls.ssl.keystore.password': STORE_PASSWORD,
    'listener.name.mtls.ssl.truststore.location': pki.truststoreJks,
    'listener.name.mtls.ssl.truststore.password': STORE_PASSWORD,
    'listener.name.mtls.ssl.client.auth': 'required',
    'listener.name.mtls.ssl.principal.mapping.rules': 'RULE:^CN=([^,]+),.*$/$1/L,DEFAULT',
    // JKS: JKS key store, PKCS12 trust store, client certificates requested, TLS 1.3 only.
    'listener.name.jks.ssl.keystore.type': 'JKS',
    'listener.name.jks.ssl.keystore.location': pki.server.jks,
    'listener.name.jks.ssl.keystore.password': STORE_PASSWORD,
    'listener.name.jks.ssl.truststore.type': 'PKCS12',
    'listener.name.jks.ssl.truststore.location': pki.truststoreP12,
    'listener.name.jks.ssl.truststore.password': STORE_PASSWORD,
    'listener.name.jks.ssl.client.auth': 'requested',
    'listener.name.jks.ssl.enabled.protocols': 'TLSv1.3',
    'listener.name.reload.ssl.keystore.type': 'PKCS12',
    'listener.name.reload.ssl.keystore.location': reloadingKeystore,
    'listener.name.reload.ssl.keystore.password': STORE_PASSWORD,
  });
});

afterAll(async () => {
  await node?.close();
  pki?.cleanup();
});

function tlsOptions(extra: ConnectionOptions = {}): ConnectionOptions {
  return { ca: [pki.caPem], servername: 'localhost', ...extra };
}

async function produceAndConsume(port: number, ssl: ConnectionOptions, topic: string): Promise<string[]> {
  const kafka = new Kafka({ clientId: 'tls-test', brokers: [`127.0.0.1:${port}`], ssl, logLevel: logLevel.NOTHING, retry: { retries: 2 } });
  return roundTrip(kafka, topic, ['one', 'two']);
}

/** Outcome of a raw TLS handshake: the server certificate's subject, or the error. */
function handshake(port: number, opts: ConnectionOptions): Promise<{ ok: boolean; subject?: string; error?: string; closedAfter?: boolean }> {
  return new Promise((resolve) => {
    const s = tlsConnect({ host: '127.0.0.1', port, ...opts }, () => {
      const subject = new X509Certificate(s.getPeerCertificate().raw).subject;
      // Under TLS 1.3 a refused client certificate shows up after the handshake: wait for data or close.
      s.write(API_VERSIONS_V0);
      s.once('data', () => {
        s.destroy();
        resolve({ ok: true, subject });
      });
      s.once('close', () => resolve({ ok: false, subject, closedAfter: true }));
    });
    s.once('error', (err) => resolve({ ok: false, error: err.message }));
  });
}


describe('SSL listeners', () => {
  it('a client produces and consumes over TLS with an inline PEM key store', async () => {
    expect(await produceAndConsume(node.port('SSL'), tlsOptions(), 'tls-pem')).toEqual(['one', 'two']);
  });

  it('Metadata answers with the address of the listener the client connected to', async () => {
    for (const name of ['PLAINTEXT', 'SSL']) {
      const port = node.port(name);
      const body = await new Promise<Buffer>((resolve, reject) => {
        const onConnect = (): void => {
          // Metadata v1, no topics (empty array): header, then int32 0.
          const payload = Buffer.from([0, 3, 0, 1, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0]);
          const frame = Buffer.concat([Buffer.from([0, 0, 0, payload.length]), payload]);
          s.write(frame);
        };
        const s = name === 'SSL' ? tlsConnect({ host: '127.0.0.1', port, ...tlsOptions() }, onConnect) : netConnect({ host: '127.0.0.1', port }, onConnect);
        let buf = Buffer.alloc(0);
        s.on('data', (d: Buffer) => {
          buf = Buffer.concat([buf, d]);
          if (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
            s.destroy();
            resolve(buf.subarray(8, 4 + buf.readInt32BE(0)));
          }
        });
        s.once('error', reject);
      });
      const res = decodeMetadataResponse(new Reader(body), 1);
      expect(res.brokers.map((b) => [b.host, b.port])).toEqual([['127.0.0.1', port]]);
    }
  });

  it('a plaintext client on a TLS port gets no answer and is disconnected', async () => {
    const c = await WireClient.connect(node.port('SSL'));
    c.write(API_VERSIONS_V0);
    await c.closed;
    await expect(c.next(100)).rejects.toThrow('no response');
  });

  it('mutual TLS: a trusted client certificate is served, an untrusted one and none are refused', async () => {
    const port = node.port('MTLS');
    const counted = async (outcome: 'successful' | 'failed'): Promise<number> =>
      total(await scrape(metrics), `kafka_server_socket_server_metrics_${outcome}_authentication_total`, { listener: 'MTLS' });
    const [ok0, failed0] = [await counted('successful'), await counted('failed')];
    const trusted = await handshake(port, tlsOptions({ key: pki.client.keyPem, cert: pki.client.certPem }));
    expect(trusted.ok).toBe(true);
    const untrusted = await handshake(port, tlsOptions({ key: pki.untrustedClient.keyPem, cert: pki.untrustedClient.certPem }));
    expect(untrusted.ok).toBe(false);
    const none = await handshake(port, tlsOptions());
    expect(none.ok).toBe(false);
    // The handshake is the authentication of an SSL listener, as Kafka's Selector counts it.
    expect(await counted('successful')).toBe(ok0 + 1);
    expect(await counted('failed')).toBe(failed0 + 2);
    expect(await produceAndConsume(port, tlsOptions({ key: pki.client.keyPem, cert: pki.client.certPem }), 'tls-mtls')).toEqual(['one', 'two']);
  });

  it('JKS key store, PKCS12 trust store, client auth requested, TLS 1.3 only', async () => {
    const port = node.port('JKS');
    expect((await handshake(port, tlsOptions())).ok).toBe(true);
    expect((await handshake(port, tlsOptions({ key: pki.client.keyPem, cert: pki.client.certPem }))).ok).toBe(true);
    expect((await handshake(port, tlsOptions({ key: pki.untrustedClient.keyPem, cert: pki.untrustedClient.certPem }))).ok).toBe(false);
    const tls12 = await handshake(port, tlsOptions({ maxVersion: 'TLSv1.2' }));
    expect(tls12.ok).toBe(false);
  });

  it('a key store file that changes is reloaded for new connections', async () => {
    const port = node.port('RELOAD');
    const before = await handshake(port, tlsOptions());
    expect(before.subject).toContain('CN=broker1');
    const next = pki.issueServer('rotated', 'broker1-rotated');
    copyFileSync(next.p12, reloadingKeystore);
    let subject = before.subject;
    await waitFor('a handshake with the rotated certificate', async () => (subject = (await handshake(port, tlsOptions())).subject)?.includes('CN=broker1-rotated') === true, 30_000, 200);
    expect(subject).toContain('CN=broker1-rotated');
    expect(node.logs().some((l) => l.includes('reloaded TLS key and trust stores'))).toBe(true);
  });
});
