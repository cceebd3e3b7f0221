/** The configuration registry: one table per scope, topic/group/mirror defaults taken from the broker's. */
import { describe, expect, it } from 'vitest';
import { BROKER_DEFS } from '../../src/config/broker-config-defs.js';
import { ConfigScope, configDef, indexDefs } from '../../src/config/config-def.js';
import { ConfigError } from '../../src/config/config-error.js';
import { configDefs, findConfigDef } from '../../src/config/registry.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { KafkaError, errorCodeOf } from '../../src/protocol/kafka-error.js';
import { DEFAULT_LOG_CONFIG } from '../../src/storage/log-config.js';

describe('config registry', () => {
  it('gives every key of a scope that scope, and every fallback a broker key that exists', () => {
    for (const scope of Object.values(ConfigScope)) {
      expect(configDefs(scope).length).toBeGreaterThan(0);
      for (const d of configDefs(scope)) {
        expect(d.scope).toBe(scope);
        if (d.brokerKey !== undefined) expect(BROKER_DEFS.has(d.brokerKey), `${scope} ${d.name} → ${d.brokerKey}`).toBe(true);
      }
    }
  });

  it('takes a topic default from its broker synonym, and the retention and roll defaults from the hours keys', () => {
    expect(findConfigDef('TOPIC', 'segment.bytes')?.defaultValue).toBe(findConfigDef('BROKER', 'log.segment.bytes')?.defaultValue);
    expect(findConfigDef('TOPIC', 'max.message.bytes')?.defaultValue).toBe('1048588');
    expect(findConfigDef('TOPIC', 'retention.ms')?.defaultValue).toBe(String(168 * 3_600_000));
    expect(findConfigDef('TOPIC', 'segment.ms')?.defaultValue).toBe(String(168 * 3_600_000));
    expect(findConfigDef('TOPIC', 'flush.ms')?.defaultValue).toBe('9223372036854775807');
    expect(DEFAULT_LOG_CONFIG.segmentBytes).toBe(1073741824);
    expect(DEFAULT_LOG_CONFIG.retentionMs).toBe(604800000);
    expect(DEFAULT_LOG_CONFIG.cleanupPolicy).toEqual(['delete']);
  });

  it('takes per-mirror fetch defaults and group defaults from the broker keys they override', () => {
    for (const key of ['mirror.fetch.backoff.ms', 'mirror.fetch.max.bytes', 'mirror.socket.timeout.ms']) {
      expect(findConfigDef('CLUSTER_MIRROR', key)?.defaultValue).toBe(findConfigDef('BROKER', key)?.defaultValue);
    }
    expect(findConfigDef('GROUP', 'consumer.session.timeout.ms')?.defaultValue).toBe('45000');
    expect(findConfigDef('GROUP', 'consumer.session.timeout.ms')?.minBrokerKey).toBe('group.consumer.min.session.timeout.ms');
  });

  it('marks password keys sensitive', () => {
    expect(findConfigDef('CLUSTER_MIRROR', 'sasl.jaas.config')?.sensitive).toBe(true);
    expect(findConfigDef('CLUSTER_MIRROR', 'bootstrap.servers')?.sensitive).toBe(false);
  });

  it('refuses a key defined twice in one scope', () => {
    const a = configDef('BROKER', 'x.y', 'int', '1');
    expect(() => indexDefs([a, configDef('BROKER', 'x.y', 'string', null)])).toThrow(/x\.y is defined twice/);
  });

  it('carries INVALID_CONFIG on a ConfigError', () => {
    const e = new ConfigError('bad');
    expect(e).toBeInstanceOf(KafkaError);
    expect(e.code).toBe(ErrorCode.INVALID_CONFIG);
    expect(errorCodeOf(e)).toBe(ErrorCode.INVALID_CONFIG);
    expect(e.message).toBe('bad');
  });
});
