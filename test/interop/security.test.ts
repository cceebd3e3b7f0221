/**
 * Real clients against a Fjord node with PLAINTEXT, SASL_SSL, SASL_PLAINTEXT and SSL (mTLS)
 * listeners, certificates made at test time: Apache Kafka's console producer and consumer (the
 * Java client) with --producer.config / --consumer.config, kcat, confluent-kafka and kafka-python
 * each produce and consume over two of SASL_SSL+PLAIN, SASL_SSL+SCRAM, SASL_PLAINTEXT+SCRAM,
 * SASL_SSL+OAUTHBEARER and SSL with mTLS (the Java client over SASL_SSL with PLAIN, SCRAM-SHA-256,
 * SCRAM-SHA-512 and OAUTHBEARER, and SSL with mTLS; kafkajs is covered in test/auth/). SCRAM
 * users are made with Apache Kafka's own `kafka-configs --alter --add-config`. A wrong password, an expired
 * token, an untrusted client certificate and a plaintext client on a TLS port are each refused.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startNode, type RunningNode } from '../helpers/node.js';
import { makeOAuthIssuer, type OAuthIssuer } from '../auth/sasl-helpers.js';
import { STORE_PASSWORD, makeTestPki, type TestPki } from '../server/tls-fixtures.js';
import { javaTool, mustSucceed } from './lib/java.js';
import { KAFKA_VERSION, VENV_PYTHON, kafkaClasspath } from './lib/paths.js';
import { run, tail, type RunResult } from './lib/run.js';

const PRODUCER = 'org.apache.kafka.tools.ConsoleProducer';
const CONSUMER = 'org.apache.kafka.tools.consumer.ConsoleConsumer';
const JAAS_PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret";';
const ISSUER = 'https://issuer.test';
const AUDIENCE = 'fjord';

let pki: TestPki;
let oauth: OAuthIssuer;
let node: RunningNode;
let dir: string;
const port: Record<'plaintext' | 'saslSsl' | 'saslPlaintext' | 'ssl', number> = { plaintext: 0, saslSsl: 0, saslPlaintext: 0, ssl: 0 };

beforeAll(async () => {
  pki = makeTestPki();
  dir = join(pki.dir, 'clients');
  mkdirSync(dir);
  oauth = await makeOAuthIssuer(join(pki.dir, 'jwks.json'));
  port.plaintext = await freePort();
  port.saslSsl = await freePort();
  port.saslPlaintext = await freePort();
  port.ssl = await freePort();
  node = await startNode({
    port: port.plaintext,
    overrides: {
      listeners: `PLAINTEXT://127.0.0.1:${port.plaintext},SASL_SSL://127.0.0.1:${port.saslSsl},SASL_PLAINTEXT://127.0.0.1:${port.saslPlaintext},SSL://127.0.0.1:${port.ssl}`,
      'num.partitions': 1,
      'offsets.topic.replication.factor': 1,
      'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER',
      'listener.name.sasl_ssl.plain.sasl.jaas.config': JAAS_PLAIN,
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS_PLAIN,
      'listener.name.sasl_plaintext.sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
      'ssl.keystore.type': 'PKCS12',
      'ssl.keystore.location': pki.server.p12,
      'ssl.keystore.password': STORE_PASSWORD,
      'ssl.truststore.location': pki.truststoreJks,
      'ssl.truststore.password': STORE_PASSWORD,
      'listener.name.ssl.ssl.client.auth': 'required',
      'ssl.principal.mapping.rules': 'RULE:^CN=([^,]+),.*$/$1/,DEFAULT',
      'sasl.oauthbearer.jwks.endpoint.url': pathToFileURL(oauth.jwksFile).href,
      'sasl.oauthbearer.expected.audience': AUDIENCE,
      'sasl.oauthbearer.expected.issuer': ISSUER,
    },
  });
  // Apache Kafka's kafka-configs (ConfigCommand, in Kafka's core jar) against the PLAINTEXT
  // listener, one mechanism per call: like a KRaft controller (ScramControlManager keys the
  // changes of one request by user name), the node refuses two changes to one user at once.
  for (const config of ['SCRAM-SHA-256=[iterations=8192,password=alice-256]', 'SCRAM-SHA-512=[password=alice-512]']) {
    const r = await run(
      'java',
      ['-Xmx256m', '-XX:TieredStopAtLevel=1', '-cp', kafkaClasspath(KAFKA_VERSION), 'kafka.admin.ConfigCommand', '--bootstrap-server', `127.0.0.1:${port.plaintext}`,
        '--alter', '--add-config', config, '--entity-type', 'users', '--entity-name', 'alice'],
      { timeoutMs: 90_000 },
    );
    mustSucceed(`kafka-configs --alter --add-config ${config}`, r);
  }
});

afterAll(async () => {
  await node?.destroy();
  pki?.cleanup();
});

function propsFile(name: string, props: Record<string, string>): string {
  const f = join(dir, `${name}.properties`);
  writeFileSync(f, Object.entries(props).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
  return f;
}

const javaTrust = { 'ssl.truststore.location': '', 'ssl.truststore.password': STORE_PASSWORD };

function javaScram512(): Record<string, string> {
  return {
    'security.protocol': 'SASL_SSL',
    'sasl.mechanism': 'SCRAM-SHA-512',
    'sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-512";',
    ...javaTrust,
    'ssl.truststore.location': pki.truststoreJks,
  };
}

/** Console producer then console consumer with the same client config; returns what was consumed. */
async function javaRoundTrip(name: string, bootstrap: string, props: Record<string, string>, topic: string): Promise<string[]> {
  const lines = ['one', 'two', 'three'];
  const producerConfig = propsFile(`${name}-producer`, props);
  mustSucceed(`${name} console producer`, await javaTool(PRODUCER, ['--bootstrap-server', bootstrap, '--topic', topic, '--producer.config', producerConfig], { input: lines.join('\n') + '\n' }));
  const consumerConfig = propsFile(`${name}-consumer`, { ...props, 'group.id': `g-${name}` });
  const r = mustSucceed(`${name} console consumer`, await javaTool(CONSUMER, ['--bootstrap-server', bootstrap, '--topic', topic, '--from-beginning', '--max-messages', '3', '--timeout-ms', '60000', '--consumer.config', consumerConfig]));
  return r.stdout.trim().split('\n');
}

/** kcat with a metadata wait of `metadataS` seconds (a refused client waits all of it). */
function kcat(args: readonly string[], input?: string, metadataS = 15): Promise<RunResult> {
  return run('kcat', ['-m', String(metadataS), '-X', 'socket.connection.setup.timeout.ms=5000', ...args], { timeoutMs: 60_000, ...(input === undefined ? {} : { input }) });
}

function kcatOk(what: string, r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`kcat ${what} failed (exit ${r.code}):\n${tail(r.stderr, 15)}`);
  return r;
}

async function kcatRoundTrip(bootstrap: string, conf: string[], topic: string): Promise<string[]> {
  const x = conf.flatMap((c) => ['-X', c]);
  kcatOk('produce', await kcat(['-P', '-b', bootstrap, '-t', topic, '-p', '0', ...x, '-X', 'message.timeout.ms=20000'], 'a\nb\nc\n'));
  const r = kcatOk('consume', await kcat(['-C', '-b', bootstrap, '-t', topic, '-p', '0', '-o', 'beginning', '-e', '-c', '3', ...x]));
  return r.stdout.trim().split('\n');
}

/** A Python snippet in the project venv; `CONF` (JSON) and `TOPIC` come in through the environment. */
async function python(code: string, env: Record<string, string>): Promise<Record<string, unknown>> {
  const r = await run(VENV_PYTHON, ['-c', code], { timeoutMs: 120_000, env: { ...process.env, ...env } });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last) as Record<string, unknown>;
  } catch {
    throw new Error(`python failed (exit ${r.code}):\n${tail(r.stdout, 10)}\n${tail(r.stderr, 15)}`);
  }
}

const CONFLUENT = String.raw`
import json, os
from confluent_kafka import Producer, Consumer
conf = json.loads(os.environ['CONF'])
token = os.environ.get('TOKEN')
if token:
    conf['oauth_cb'] = lambda _cfg: (token, 4102444800.0)
topic = os.environ['TOPIC']
errors = []
conf['error_cb'] = lambda e: errors.append(str(e))
p = Producer(dict(conf, **{'message.timeout.ms': 15000}))
delivered = []
for i in range(3):
    p.produce(topic, value=('v%d' % i).encode(), partition=0, on_delivery=lambda err, msg: delivered.append(err is None))
p.flush(20)
out = {'delivered': delivered.count(True), 'errors': errors[:3]}
if delivered.count(True) == 3:
    c = Consumer(dict(conf, **{'group.id': 'g-' + topic, 'auto.offset.reset': 'earliest'}))
    c.subscribe([topic])
    seen = []
    for _ in range(60):
        m = c.poll(1.0)
        if m is not None and m.error() is None:
            seen.append(m.value().decode())
        if len(seen) == 3:
            break
    c.close()
    out['consumed'] = seen
print(json.dumps(out))
`;

const KAFKA_PYTHON = String.raw`
import json, os
from kafka import KafkaProducer, KafkaConsumer
conf = json.loads(os.environ['CONF'])
topic = os.environ['TOPIC']
p = KafkaProducer(**conf)
for i in range(3):
    p.send(topic, value=('k%d' % i).encode(), partition=0).get(timeout=30)
p.close()
c = KafkaConsumer(topic, group_id='g-' + topic, auto_offset_reset='earliest', consumer_timeout_ms=20000, **conf)
seen = []
for m in c:
    seen.append(m.value.decode())
    if len(seen) == 3:
        break
c.close()
print(json.dumps({'consumed': seen}))
`;

describe('the Java client (console producer and consumer)', () => {
  it('SASL_SSL with SCRAM-SHA-512 (credentials from kafka-configs)', async () => {
    expect(await javaRoundTrip('java-scram', `127.0.0.1:${port.saslSsl}`, javaScram512(), 'java-scram')).toEqual(['one', 'two', 'three']);
  });

  it('SASL_SSL with PLAIN (users from the listener JAAS config)', async () => {
    const props = {
      ...javaScram512(),
      'sasl.mechanism': 'PLAIN',
      'sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";',
    };
    expect(await javaRoundTrip('java-plain', `127.0.0.1:${port.saslSsl}`, props, 'java-plain')).toEqual(['one', 'two', 'three']);
  });

  it('SASL_SSL with SCRAM-SHA-256 (credentials from kafka-configs)', async () => {
    const props = {
      ...javaScram512(),
      'sasl.mechanism': 'SCRAM-SHA-256',
      'sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-256";',
    };
    expect(await javaRoundTrip('java-scram-256', `127.0.0.1:${port.saslSsl}`, props, 'java-scram-256')).toEqual(['one', 'two', 'three']);
  });

  it('SSL with mutual TLS (PKCS12 client key store)', async () => {
    const props = {
      'security.protocol': 'SSL',
      'ssl.keystore.type': 'PKCS12',
      'ssl.keystore.location': pki.client.p12,
      'ssl.keystore.password': STORE_PASSWORD,
      'ssl.key.password': STORE_PASSWORD,
      'ssl.truststore.location': pki.truststoreJks,
      'ssl.truststore.password': STORE_PASSWORD,
    };
    expect(await javaRoundTrip('java-mtls', `127.0.0.1:${port.ssl}`, props, 'java-mtls')).toEqual(['one', 'two', 'three']);
  });
});

describe('the Java client with OAUTHBEARER', () => {
  it('SASL_SSL with a signed token read from a file (KIP-768 file token endpoint)', async () => {
    const tokenFile = join(dir, 'token.jwt');
    writeFileSync(tokenFile, await oauth.token({ sub: 'svc-java', aud: AUDIENCE, iss: ISSUER }));
    const tokenUrl = pathToFileURL(tokenFile).href;
    const props = {
      'security.protocol': 'SASL_SSL',
      'sasl.mechanism': 'OAUTHBEARER',
      'sasl.login.callback.handler.class': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler',
      'sasl.oauthbearer.token.endpoint.url': tokenUrl,
      'sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;',
      'ssl.truststore.location': pki.truststoreJks,
      'ssl.truststore.password': STORE_PASSWORD,
    };
    // Kafka 4's client reads a token URL only when the JVM allows it (CVE-2025-27817).
    const previous = process.env['JAVA_TOOL_OPTIONS'];
    process.env['JAVA_TOOL_OPTIONS'] = `-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=${tokenUrl}`;
    try {
      expect(await javaRoundTrip('java-oauth', `127.0.0.1:${port.saslSsl}`, props, 'java-oauth')).toEqual(['one', 'two', 'three']);
    } finally {
      if (previous === undefined) delete process.env['JAVA_TOOL_OPTIONS'];
      else process.env['JAVA_TOOL_OPTIONS'] = previous;
    }
  });
});

describe('kcat (librdkafka)', () => {
  it('SASL_SSL with PLAIN', async () => {
    const conf = ['security.protocol=SASL_SSL', 'sasl.mechanisms=PLAIN', 'sasl.username=alice', 'sasl.password=alice-secret', `ssl.ca.location=${pki.caFile}`];
    expect(await kcatRoundTrip(`127.0.0.1:${port.saslSsl}`, conf, 'kcat-plain')).toEqual(['a', 'b', 'c']);
  });

  it('SASL_PLAINTEXT with SCRAM-SHA-256', async () => {
    const conf = ['security.protocol=SASL_PLAINTEXT', 'sasl.mechanisms=SCRAM-SHA-256', 'sasl.username=alice', 'sasl.password=alice-256'];
    expect(await kcatRoundTrip(`127.0.0.1:${port.saslPlaintext}`, conf, 'kcat-scram')).toEqual(['a', 'b', 'c']);
  });

  // Each refusal shows in the first second; the wait only bounds how long kcat keeps retrying.
  const REFUSED_WAIT_S = 5;
  it('refuses a wrong password, an untrusted client certificate and plaintext on a TLS port', async () => {
    const wrong = await kcat(['-L', '-b', `127.0.0.1:${port.saslSsl}`, '-X', 'security.protocol=SASL_SSL', '-X', 'sasl.mechanisms=SCRAM-SHA-512',
      '-X', 'sasl.username=alice', '-X', 'sasl.password=wrong', '-X', `ssl.ca.location=${pki.caFile}`], undefined, REFUSED_WAIT_S);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/SASL authentication error|Authentication failed/);
    const untrusted = await kcat(['-L', '-b', `127.0.0.1:${port.ssl}`, '-X', 'security.protocol=SSL', '-X', `ssl.ca.location=${pki.caFile}`,
      '-X', `ssl.certificate.location=${pki.untrustedClient.certFile}`, '-X', `ssl.key.location=${pki.untrustedClient.keyFile}`], undefined, REFUSED_WAIT_S);
    expect(untrusted.code).not.toBe(0);
    const plaintext = await kcat(['-L', '-b', `127.0.0.1:${port.saslSsl}`], undefined, REFUSED_WAIT_S);
    expect(plaintext.code).not.toBe(0);
  });
});

describe('confluent-kafka (Python)', () => {
  it('SASL_SSL with SCRAM-SHA-512', async () => {
    const conf = { 'bootstrap.servers': `127.0.0.1:${port.saslSsl}`, 'security.protocol': 'SASL_SSL', 'sasl.mechanisms': 'SCRAM-SHA-512', 'sasl.username': 'alice', 'sasl.password': 'alice-512', 'ssl.ca.location': pki.caFile };
    const out = await python(CONFLUENT, { CONF: JSON.stringify(conf), TOPIC: 'ck-scram' });
    expect(out.consumed).toEqual(['v0', 'v1', 'v2']);
  });

  it('SASL_SSL with OAUTHBEARER; an expired token is refused', async () => {
    const conf = { 'bootstrap.servers': `127.0.0.1:${port.saslSsl}`, 'security.protocol': 'SASL_SSL', 'sasl.mechanisms': 'OAUTHBEARER', 'ssl.ca.location': pki.caFile };
    const good = await oauth.token({ sub: 'svc-orders', aud: AUDIENCE, iss: ISSUER });
    const out = await python(CONFLUENT, { CONF: JSON.stringify(conf), TOPIC: 'ck-oauth', TOKEN: good });
    expect(out.consumed).toEqual(['v0', 'v1', 'v2']);
    const expired = await oauth.token({ sub: 'svc-orders', aud: AUDIENCE, iss: ISSUER, expiresInSeconds: -600 });
    const refused = await python(CONFLUENT, { CONF: JSON.stringify(conf), TOPIC: 'ck-oauth-expired', TOKEN: expired });
    expect(refused.delivered).toBe(0);
    expect(JSON.stringify(refused.errors)).toMatch(/invalid_token|Authentication|SASL/i);
  });
});

describe('kafka-python', () => {
  it('SASL_SSL with PLAIN', async () => {
    const conf = { bootstrap_servers: `127.0.0.1:${port.saslSsl}`, security_protocol: 'SASL_SSL', sasl_mechanism: 'PLAIN', sasl_plain_username: 'alice', sasl_plain_password: 'alice-secret', ssl_cafile: pki.caFile };
    expect((await python(KAFKA_PYTHON, { CONF: JSON.stringify(conf), TOPIC: 'kp-plain' })).consumed).toEqual(['k0', 'k1', 'k2']);
  });

  it('SASL_PLAINTEXT with SCRAM-SHA-256', async () => {
    const conf = { bootstrap_servers: `127.0.0.1:${port.saslPlaintext}`, security_protocol: 'SASL_PLAINTEXT', sasl_mechanism: 'SCRAM-SHA-256', sasl_plain_username: 'alice', sasl_plain_password: 'alice-256' };
    expect((await python(KAFKA_PYTHON, { CONF: JSON.stringify(conf), TOPIC: 'kp-scram' })).consumed).toEqual(['k0', 'k1', 'k2']);
  });
});
