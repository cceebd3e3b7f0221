/**
 * Hostile input on the authentication path: random and truncated SaslHandshake and
 * SaslAuthenticate frames, TLS garbage, TLS handshakes left half-open, and 1,000 failed logins in
 * a row. Through all of it the node keeps serving an authenticated client, and what that client
 * produced is all there.
 */
import { randomBytes } from 'node:crypto';
import { connect as netConnect } from 'node:net';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestPki, type TestPki } from '../server/tls-fixtures.js';
import { startSecureNode, type SecureNode } from '../server/secure-node.js';
import { SaslWire, plainToken } from './sasl-helpers.js';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";';

let pki: TestPki;
let node: SecureNode;
let kafka: Kafka;
let producer: Producer;
let sent = 0;

beforeAll(async () => {
  pki = makeTestPki();
  node = await startSecureNode({
    listeners: 'SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0',
    'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
    'listener.name.sasl_ssl.plain.sasl.jaas.config': JAAS,
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': pki.server.pemFile,
    'fjord.authentication.timeout.ms': '1000',
    'connection.failed.authentication.delay.ms': '5',
  });
  kafka = new Kafka({
    clientId: 'steady',
    brokers: [`127.0.0.1:${node.port('SASL_SSL')}`],
    ssl: { ca: [pki.caPem], servername: 'localhost' },
    sasl: { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
    logLevel: logLevel.NOTHING,
  });
  producer = kafka.producer({ allowAutoTopicCreation: true });
  await producer.connect();
});

afterAll(async () => {
  await producer?.disconnect();
  await node?.close();
  pki?.cleanup();
});

/** The authenticated client still produces: one more record acknowledged. */
async function stillServing(): Promise<void> {
  await producer.send({ topic: 'steady', messages: [{ value: `m${sent}` }] });
  sent++;
}

function frame(payload: Buffer): Buffer {
  const b = Buffer.alloc(4 + payload.length);
  b.writeInt32BE(payload.length, 0);
  payload.copy(b, 4);
  return b;
}

/** Sends bytes on a fresh plaintext connection and waits for the node to close it (or 2 s of silence). */
function sendAndWait(port: number, bytes: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const s = netConnect({ host: '127.0.0.1', port }, () => s.write(bytes));
    const t = setTimeout(() => {
      s.destroy();
      resolve();
    }, 2000);
    s.on('data', () => undefined);
    s.once('close', () => {
      clearTimeout(t);
      resolve();
    });
    s.once('error', () => undefined);
  });
}

describe('hostile input on the authentication path', () => {
  it('random and truncated SaslHandshake / SaslAuthenticate frames', async () => {
    const port = node.port('SASL_PLAINTEXT');
    const header = (apiKey: number, version: number): Buffer => {
      const h = Buffer.alloc(10);
      h.writeInt16BE(apiKey, 0);
      h.writeInt16BE(version, 2);
      h.writeInt32BE(1, 4);
      h.writeInt16BE(-1, 8);
      return h;
    };
    const cases: Buffer[] = [];
    for (let i = 0; i < 60; i++) {
      const apiKey = i % 2 === 0 ? 17 : 36;
      const version = i % 3;
      cases.push(frame(Buffer.concat([header(apiKey, version), randomBytes(i * 7)])));
      // Declared longer than what follows: the node must wait, then drop it at the timeout.
      const full = frame(Buffer.concat([header(apiKey, version), randomBytes(64)]));
      cases.push(full.subarray(0, 4 + (i % 40)));
    }
    // A string length past the end, an absurd frame size, a negative one.
    cases.push(frame(Buffer.concat([header(17, 1), Buffer.from([0x7f, 0xff])])));
    cases.push(Buffer.from([0x7f, 0xff, 0xff, 0xff, 1, 2, 3]));
    cases.push(Buffer.from([0xff, 0xff, 0xff, 0xf0]));
    for (let i = 0; i < cases.length; i += 20) {
      await Promise.all(cases.slice(i, i + 20).map((c) => sendAndWait(port, c)));
      await stillServing();
    }
    // A handshake, then a random SCRAM first message, then random final messages.
    for (let i = 0; i < 30; i++) {
      const c = await SaslWire.connect(port);
      await c.handshake('SCRAM-SHA-256');
      const first = await c.authenticate(randomBytes(i * 3 + 1)).catch(() => null);
      if (first) expect([0, 58]).toContain(first.errorCode);
      c.close();
    }
    await stillServing();
  });

  it('TLS garbage and half-open TLS handshakes on the SASL_SSL port', async () => {
    const port = node.port('SASL_SSL');
    // A ClientHello record header promising more than is ever sent: a half-open handshake.
    const halfHello = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]);
    await Promise.all([
      ...Array.from({ length: 20 }, () => sendAndWait(port, randomBytes(512))),
      ...Array.from({ length: 20 }, () => sendAndWait(port, halfHello)),
      ...Array.from({ length: 5 }, () => sendAndWait(port, frame(Buffer.from([0, 18, 0, 0, 0, 0, 0, 1, 0xff, 0xff])))),
    ]);
    await stillServing();
  });

  it('1,000 failed logins in a row', async () => {
    const port = node.port('SASL_PLAINTEXT');
    let refused = 0;
    for (let batch = 0; batch < 20; batch++) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const c = await SaslWire.connect(port);
          await c.handshake('PLAIN');
          const res = await c.authenticate(plainToken(i % 2 === 0 ? 'alice' : `nobody${i}`, `wrong-${batch}-${i}`));
          if (res.errorCode === 58) refused++;
          await c.closed;
        }),
      );
    }
    expect(refused).toBe(1000);
    await stillServing();
    // The failures are logged, but rate-limited: far fewer lines than failures.
    const lines = node.logs().filter((l) => l.includes('"msg":"failed authentication"'));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThan(100);
  });

  it('loses nothing the authenticated client produced meanwhile', async () => {
    const consumer = kafka.consumer({ groupId: 'steady-check' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'steady', fromBeginning: true });
    const seen = new Set<string>();
    await new Promise<void>((resolve, reject) => {
      consumer.run({ eachMessage: async ({ message }) => {
        seen.add(message.value!.toString());
        if (seen.size === sent) resolve();
      } }).catch(reject);
    });
    await consumer.disconnect();
    expect([...seen].sort()).toEqual(Array.from({ length: sent }, (_, i) => `m${i}`).sort());
  });
});
