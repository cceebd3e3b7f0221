/** Node configuration: Kafka keys and defaults, properties files, refusal of invalid values. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BrokerConfig, ConfigError, checkTopicConfig, parseProperties } from '../../src/broker/config.js';
import { parseStartArgs } from '../../src/cli/start.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeDescribeConfigsRequest } from '../../src/protocol/generated/messages/describe-configs-request.js';
import { decodeDescribeConfigsResponse } from '../../src/protocol/generated/messages/describe-configs-response.js';
import { ROOT, ensureBuilt, startNode } from '../helpers/node.js';
import { WireClient } from './wire.js';

describe('BrokerConfig', () => {
  it('has Kafka defaults and the documented start defaults', () => {
    const c = new BrokerConfig();
    expect(c.nodeId).toBe(1);
    expect(c.listeners).toEqual([{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9092 }]);
    expect(c.dataDir).toBe('./data');
    expect(c.int('num.partitions')).toBe(1);
    expect(c.int('message.max.bytes')).toBe(1048588);
    expect(c.int('socket.request.max.bytes')).toBe(104857600);
    expect(c.int('offsets.topic.num.partitions')).toBe(50);
    expect(c.retentionMs).toBe(168 * 3_600_000);
    expect(c.bool('auto.create.topics.enable')).toBe(true);
  });

  it('applies overrides with Kafka precedence (retention ms over minutes over hours)', () => {
    expect(new BrokerConfig([['log.retention.hours', '1']]).retentionMs).toBe(3_600_000);
    expect(new BrokerConfig([['log.retention.hours', '1'], ['log.retention.minutes', '2']]).retentionMs).toBe(120_000);
    expect(new BrokerConfig([['log.retention.minutes', '2'], ['log.retention.ms', '5']]).retentionMs).toBe(5);
    const c = new BrokerConfig([['log.dirs', '/a,/b'], ['advertised.listeners', 'PLAINTEXT://example.com:19092'], ['listeners', 'PLAINTEXT://0.0.0.0:9093']]);
    expect(c.dataDir).toBe('/a');
    expect(c.advertisedListeners[0]).toEqual({ name: 'PLAINTEXT', host: 'example.com', port: 19092 });
    expect(new BrokerConfig([['listeners', 'PLAINTEXT://0.0.0.0:9093']]).advertisedListeners[0]!.host).toBe('127.0.0.1');
  });

  it('warns about unknown keys and refuses invalid values with a clear message', () => {
    expect(new BrokerConfig([['no.such.key', 'x']]).warnings).toEqual([{ key: 'no.such.key', message: "unknown configuration key 'no.such.key' is ignored" }]);
    expect(() => new BrokerConfig([['num.partitions', 'three']])).toThrow(/num.partitions: expected an integer, got 'three'/);
    expect(() => new BrokerConfig([['num.partitions', '0']])).toThrow(/at least 1/);
    expect(() => new BrokerConfig([['auto.create.topics.enable', 'maybe']])).toThrow(ConfigError);
    expect(() => new BrokerConfig([['log.message.timestamp.type', 'Whenever']])).toThrow(/CreateTime, LogAppendTime/);
    expect(() => new BrokerConfig([['listeners', 'localhost:9092']])).toThrow(/NAME:\/\/host:port/);
    expect(() => new BrokerConfig([['message.max.bytes', '99999999999']])).toThrow(/out of range/);
  });

  it('validates topic configs by key and value', () => {
    expect(checkTopicConfig('retention.ms', '1000')).toBeNull();
    expect(checkTopicConfig('cleanup.policy', 'compact,delete')).toBeNull();
    expect(checkTopicConfig('cleanup.policy', 'shred')).toMatch(/Invalid value/);
    expect(checkTopicConfig('no.such', '1')).toMatch(/Unknown topic config/);
    expect(checkTopicConfig('message.timestamp.type', 'LogAppendTime')).toBeNull();
  });
});

describe('properties and arguments', () => {
  it('parses Java properties: comments, separators, continuations, escapes', () => {
    const text = '# comment\n! also\nnode.id=3\nlisteners : PLAINTEXT://127.0.0.1:1234\nlog.dirs /tmp/x\nlong.value=a,\\\n  b\nkey\\=with=eq\n';
    expect(parseProperties(text)).toEqual([
      ['node.id', '3'],
      ['listeners', 'PLAINTEXT://127.0.0.1:1234'],
      ['log.dirs', '/tmp/x'],
      ['long.value', 'a,b'],
      ['key=with', 'eq'],
    ]);
  });

  it('reads --config then --override, later wins', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fjord-cfg-'));
    const file = join(dir, 'server.properties');
    writeFileSync(file, 'node.id=7\nnum.partitions=4\n');
    const c = new BrokerConfig(parseStartArgs(['--config', file, '--override', 'num.partitions=9', '--override=log.dirs=/tmp/q']));
    expect(c.nodeId).toBe(7);
    expect(c.int('num.partitions')).toBe(9);
    expect(c.dataDir).toBe('/tmp/q');
    expect(() => parseStartArgs(['--override', 'novalue'])).toThrow(/key=value/);
    expect(() => parseStartArgs(['--bogus'])).toThrow(/unknown option/);
  });

  it('the fjord command refuses to start on an invalid value and names it', () => {
    ensureBuilt();
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/fjord.js'), 'start', '--override', 'num.partitions=abc', '--override', `log.dirs=${mkdtempSync(join(tmpdir(), 'fjord-bad-'))}`], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("Invalid value for num.partitions: expected an integer, got 'abc'");
  }, 180_000);
});

describe('DescribeConfigs of a sensitive broker key', () => {
  it('reports a PASSWORD key as sensitive with a null value, in its synonyms too', async () => {
    const node = await startNode({ overrides: { 'password.encoder.secret': 'not-for-clients' } });
    const c = await WireClient.connect(node.port);
    try {
      const r = decodeDescribeConfigsResponse(
        await c.call(32, 4, (w) =>
          encodeDescribeConfigsRequest(w, { resources: [{ resourceType: 4, resourceName: '1', configurationKeys: ['password.encoder.secret', 'num.partitions'] }], includeSynonyms: true }, 4),
        ),
        4,
      );
      const res = r.results[0]!;
      expect(res.errorCode).toBe(ErrorCode.NONE);
      const secret = res.configs.find((e) => e.name === 'password.encoder.secret')!;
      expect(secret).toMatchObject({ value: null, isSensitive: true, readOnly: true, configSource: 4, configType: 9 });
      expect(secret.synonyms).toEqual([{ name: 'password.encoder.secret', value: null, source: 4 }]);
      expect(res.configs.find((e) => e.name === 'num.partitions')).toMatchObject({ value: '1', isSensitive: false });
    } finally {
      c.close();
      await node.destroy();
    }
  }, 120_000);
});
