/**
 * The inter-broker keys: `security.inter.broker.protocol` picks the listener named after it (and
 * may not be set beside `inter.broker.listener.name`, as Kafka refuses), and a node joining a
 * cluster whose SASL inter-broker listener it cannot log in to stops at start with a message
 * naming the key to set: no mechanism, a mechanism the listener does not enable, or a JAAS
 * config without the node's own username and password. A `fjord start` process is refused
 * before it opens any port.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interBrokerSecurity } from '../../src/client/inter-broker-security.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { planListeners, type ConfigLookup } from '../../src/config/listeners.js';
import { ROOT, ensureBuilt, freePort } from '../helpers/node.js';
import { STORE_PASSWORD, makeTestPki, type TestPki } from '../server/tls-fixtures.js';

const lookup = (kv: Record<string, string>): ConfigLookup => ({ get: (k) => kv[k], isExplicit: (k) => k in kv });
const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="b" user_broker="b";';
const SASL: Record<string, string> = {
  listeners: 'PLAINTEXT://127.0.0.1:9092,SASL_PLAINTEXT://127.0.0.1:9093',
  'listener.name.sasl_plaintext.sasl.enabled.mechanisms': 'PLAIN',
  'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
  'inter.broker.listener.name': 'SASL_PLAINTEXT',
};

let pki: TestPki;
let dataDir: string;

beforeAll(() => {
  ensureBuilt();
  pki = makeTestPki();
  dataDir = mkdtempSync(join(tmpdir(), 'fjord-inter-broker-'));
}, 120_000);

afterAll(() => {
  pki?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('inter-broker listener and login', () => {
  it('security.inter.broker.protocol picks the listener of that name; with inter.broker.listener.name too it is refused', () => {
    const both = { listeners: 'PLAINTEXT://127.0.0.1:9092,SASL_SSL://127.0.0.1:9093' };
    expect(planListeners(lookup({ ...both, 'security.inter.broker.protocol': 'SASL_SSL' })).interBrokerListener).toBe('SASL_SSL');
    expect(planListeners(lookup(both)).interBrokerListener).toBe('PLAINTEXT');
    expect(() => planListeners(lookup({ ...both, 'security.inter.broker.protocol': 'SSL' }))).toThrow(/security.inter.broker.protocol SSL names no listener/);
    expect(() => planListeners(lookup({ ...both, 'security.inter.broker.protocol': 'SASL_SSL', 'inter.broker.listener.name': 'SASL_SSL' }))).toThrow(
      /Only one of inter.broker.listener.name and security.inter.broker.protocol/,
    );
  });

  it('a SASL inter-broker listener needs a mechanism it enables and the node login in its JAAS config', () => {
    const refusal = (kv: Record<string, string>): unknown => {
      const cfg = lookup(kv);
      try {
        interBrokerSecurity(cfg, planListeners(cfg));
        return null;
      } catch (err) {
        return err;
      }
    };
    expect(refusal(SASL)).toMatchObject({ code: ErrorCode.INVALID_CONFIG, message: expect.stringContaining('set sasl.mechanism.inter.broker.protocol') });
    expect(refusal({ ...SASL, 'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-256' })).toMatchObject({ message: expect.stringContaining('SCRAM-SHA-256 is not enabled on the inter-broker listener SASL_PLAINTEXT') });
    const noLogin = { ...SASL, 'sasl.mechanism.inter.broker.protocol': 'PLAIN', 'listener.name.sasl_plaintext.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_broker="b";' };
    expect(refusal(noLogin)).toMatchObject({ message: expect.stringContaining('needs username and password') });
    const ok = lookup({ ...SASL, 'sasl.mechanism.inter.broker.protocol': 'PLAIN' });
    const sec = interBrokerSecurity(ok, planListeners(ok));
    expect(sec.authenticate).toBeTypeOf('function');
    expect(sec.socketFactory).toBeUndefined();
    const plain = lookup({ listeners: 'PLAINTEXT://127.0.0.1:9092' });
    expect(interBrokerSecurity(plain, planListeners(plain))).toEqual({});
  });

  it('fjord start joining a cluster over SASL_SSL without sasl.mechanism.inter.broker.protocol exits 1 naming the key', async () => {
    const port = await freePort();
    const overrides: Record<string, string> = {
      'node.id': '1',
      'log.dirs': dataDir,
      // Refused before etcd is ever asked: nothing needs to listen here.
      'metadata.etcd.endpoints': 'http://127.0.0.1:1',
      listeners: `SECURE://127.0.0.1:${port}`,
      'listener.security.protocol.map': 'SECURE:SASL_SSL',
      'inter.broker.listener.name': 'SECURE',
      'listener.name.secure.sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.secure.plain.sasl.jaas.config': JAAS,
      'listener.name.secure.ssl.keystore.location': pki.server.p12,
      'listener.name.secure.ssl.keystore.type': 'PKCS12',
      'listener.name.secure.ssl.keystore.password': STORE_PASSWORD,
    };
    const args = [join(ROOT, 'bin/fjord.js'), 'start'];
    for (const [k, v] of Object.entries(overrides)) args.push('--override', `${k}=${v}`);
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('set sasl.mechanism.inter.broker.protocol');
    expect(stderr).not.toContain('node started');
  }, 60_000);
});
