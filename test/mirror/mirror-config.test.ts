import { describe, expect, it } from 'vitest';
import {
  connectionFingerprint,
  matchesAny,
  mirrorBrokerConfig,
  mirrorConfigValue,
  validateMirrorConfigEntry,
  validateMirrorName,
} from '../../src/mirror/mirror-config.js';
import { mirrorStateKeyString, uuidToKafkaString } from '../../src/mirror/mirror-coordinator.js';
import { partitionForKey } from '../../src/coordinator/coordinator-runtime.js';

describe('mirror names and configs', () => {
  it('applies the topic-name rules to mirror names', () => {
    expect(validateMirrorName('dr-eu.1_a')).toBeNull();
    expect(validateMirrorName('')).not.toBeNull();
    expect(validateMirrorName('.')).not.toBeNull();
    expect(validateMirrorName('..')).not.toBeNull();
    expect(validateMirrorName('a/b')).not.toBeNull();
    expect(validateMirrorName('x'.repeat(249))).toBeNull();
    expect(validateMirrorName('x'.repeat(250))).not.toBeNull();
  });

  it('validates keys and values', () => {
    expect(validateMirrorConfigEntry('bootstrap.servers', 'a:1,b:2')).toBeNull();
    expect(validateMirrorConfigEntry('bootstrap.servers', 'a')).toMatch(/host:port/);
    expect(validateMirrorConfigEntry('bootstrap.servers', null)).toMatch(/cannot be deleted/);
    expect(validateMirrorConfigEntry('mirror.fetch.max.bytes', '-5')).toMatch(/at least 0/);
    expect(validateMirrorConfigEntry('request.timeout.ms', '1e3')).toMatch(/integer/);
    expect(validateMirrorConfigEntry('mirror.topics.include', 'a.*,(')).toMatch(/regular expression/);
    expect(validateMirrorConfigEntry('security.protocol', 'SASL_SSL')).toBeNull();
    expect(validateMirrorConfigEntry('security.protocol', 'TLS')).not.toBeNull();
    expect(validateMirrorConfigEntry('no.such.key', 'x')).toMatch(/unknown/);
  });

  it('has the spec defaults', () => {
    const empty = new Map<string, string>();
    expect(mirrorConfigValue(empty, 'mirror.topics.exclude')).toBe('__.*');
    expect(mirrorConfigValue(empty, 'mirror.groups.include')).toBe('.*');
    expect(mirrorConfigValue(empty, 'mirror.fetch.max.bytes')).toBe(String(1024 * 1024));
    expect(mirrorBrokerConfig(() => undefined)).toMatchObject({
      stateTopicPartitions: 50,
      metadataRefreshIntervalMs: 60_000,
      failedRetryInitialBackoffMs: 1000,
      failedRetryMaxBackoffMs: 300_000,
      failedRetryMaxAttempts: 100,
      numReplicaFetchers: 1,
    });
  });

  it('counts only connection settings as connection changes', () => {
    const base = new Map([['bootstrap.servers', 'a:1'], ['mirror.topics.include', 'x']]);
    const filterOnly = new Map([['bootstrap.servers', 'a:1'], ['mirror.topics.include', 'y'], ['mirror.groups.exclude', 'g']]);
    const moved = new Map([['bootstrap.servers', 'b:1'], ['mirror.topics.include', 'x']]);
    expect(connectionFingerprint(base)).toBe(connectionFingerprint(filterOnly));
    expect(connectionFingerprint(base)).not.toBe(connectionFingerprint(moved));
  });

  it('matches whole names against regex lists', () => {
    expect(matchesAny('orders-eu', ['orders-.*'])).toBe(true);
    expect(matchesAny('my-orders-eu', ['orders-.*'])).toBe(false);
    expect(matchesAny('__consumer_offsets', ['__.*'])).toBe(true);
  });
});

describe('__mirror_state partitioning', () => {
  it('hashes "mirror:topicIdBase64:partition" with Java String.hashCode', () => {
    const id = '0f0e0d0c-0b0a-0908-0706-050403020100';
    expect(uuidToKafkaString(id)).toBe('Dw4NDAsKCQgHBgUEAwIBAA');
    const key = mirrorStateKeyString('m1', id, 3);
    expect(key).toBe('m1:Dw4NDAsKCQgHBgUEAwIBAA:3');
    // Java: "m1:Dw4NDAsKCQgHBgUEAwIBAA:3".hashCode() = -709837692 → abs % 50 = 42
    expect(partitionForKey(key, 50)).toBe(42);
  });
});
