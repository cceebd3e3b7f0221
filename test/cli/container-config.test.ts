/** What the container image reads: KAFKA_* variables as configs, and the address its health check asks. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BrokerConfig } from '../../src/broker/config.js';
import { listenerAddressOf } from '../../src/cli/broker-api-versions.js';
import { configFromEnvironment } from '../../src/cli/config-sources.js';
import { parseStartArgs } from '../../src/cli/start.js';

const dir = mkdtempSync(join(tmpdir(), 'fjord-container-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('configs from the environment', () => {
  it("maps names as Apache Kafka's image does: _ is '.', __ is '_', ___ is '-'", () => {
    const env = {
      KAFKA_NODE_ID: '3',
      KAFKA_LISTENER_NAME_SASL__SSL_PLAIN_SASL___JAAS_CONFIG: 'x',
      KAFKA_: 'ignored: no key',
      PATH: '/usr/bin',
      KAFKA_LOG_DIRS: '/var/lib/fjord',
    };
    expect(configFromEnvironment(env, 'KAFKA_')).toEqual([
      ['listener.name.sasl_ssl.plain.sasl-jaas.config', 'x'],
      ['log.dirs', '/var/lib/fjord'],
      ['node.id', '3'],
    ]);
  });

  it('wins over the files and loses to --override, with --env-prefix only', () => {
    const file = join(dir, 'server.properties');
    writeFileSync(file, 'node.id=1\nnum.partitions=2\nlog.dirs=/from/file\n');
    const env = { KAFKA_NODE_ID: '7', KAFKA_NUM_PARTITIONS: '5' };
    const c = new BrokerConfig(parseStartArgs([file, '--env-prefix', 'KAFKA_', '--override', 'num.partitions=9'], env));
    expect(c.get('node.id')).toBe('7');
    expect(c.get('num.partitions')).toBe('9');
    expect(c.get('log.dirs')).toBe('/from/file');
    expect(new BrokerConfig(parseStartArgs([file], env)).get('node.id')).toBe('1');
    expect(() => parseStartArgs([file, '--env-prefix', ''], env)).toThrow(/must not be empty/);
  });
});

describe("the health check's address", () => {
  it("is the first listener's, a wildcard host asked on loopback", () => {
    expect(listenerAddressOf([['listeners', 'PLAINTEXT://0.0.0.0:9092,SSL://0.0.0.0:9093']])).toEqual({ host: '127.0.0.1', port: 9092 });
    expect(listenerAddressOf([['listeners', 'PLAINTEXT://0.0.0.0:9092'], ['listeners', 'INTERNAL://broker-1:19092']])).toEqual({ host: 'broker-1', port: 19092 });
    expect(listenerAddressOf([['listeners', 'PLAINTEXT://[::]:9092']])).toEqual({ host: '127.0.0.1', port: 9092 });
    expect(listenerAddressOf([['listeners', 'PLAINTEXT://:9095']])).toEqual({ host: '127.0.0.1', port: 9095 });
    expect(listenerAddressOf([])).toEqual({ host: '127.0.0.1', port: 9092 });
  });
});
