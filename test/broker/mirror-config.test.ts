/** KIP-1279 broker configs: known with the spec's defaults, validated, and seen by the mirror code. */
import { expect, it } from 'vitest';
import type { BrokerContext } from '../../src/broker/broker-context.js';
import { BrokerConfig } from '../../src/broker/config.js';
import { ConfigResolver } from '../../src/broker/config-resolver.js';
import { createCoordinatorHost } from '../../src/broker/coordinator-host-impl.js';
import { MetadataImage } from '../../src/controller/metadata-image.js';
import { mirrorBrokerConfig } from '../../src/mirror/mirror-config.js';
import { startNode } from '../helpers/node.js';

const SPEC_DEFAULTS: Record<string, string> = {
  'mirror.state.topic.num.partitions': '50',
  'mirror.state.topic.replication.factor': '3',
  'mirror.num.replica.fetchers': '1',
  'mirror.metadata.refresh.interval.ms': '60000',
  'mirror.failed.retry.initial.backoff.ms': '1000',
  'mirror.failed.retry.max.backoff.ms': '300000',
  'mirror.failed.retry.max.attempts': '100',
  'mirror.fetch.backoff.ms': '1000',
  'mirror.fetch.wait.max.ms': '1000',
  'mirror.fetch.min.bytes': '1',
  'mirror.fetch.response.max.bytes': String(10 * 1024 * 1024),
  'mirror.fetch.max.bytes': String(1024 * 1024),
  'mirror.socket.timeout.ms': '30000',
  'mirror.socket.receive.buffer.bytes': String(64 * 1024),
};

/** The mirror's view of broker config, through the node's real coordinator host. */
function mirrorView(values: [string, string][]): ReturnType<typeof mirrorBrokerConfig> {
  const config = new BrokerConfig(values);
  const image = new MetadataImage();
  // One node: no etcd quorum, so the coordinators lead everything.
  const ctx = { config, image, configs: new ConfigResolver(config, image), nodeId: 1, host: '127.0.0.1', port: 9092, cluster: { distributed: false } } as unknown as BrokerContext;
  const host = createCoordinatorHost(ctx);
  return mirrorBrokerConfig((k) => host.config(k));
}

it('knows every mirror broker key with the spec default and no warning', () => {
  const c = new BrokerConfig(Object.entries(SPEC_DEFAULTS));
  expect(c.warnings).toEqual([]);
  const d = new BrokerConfig();
  for (const [k, v] of Object.entries(SPEC_DEFAULTS)) expect([k, d.get(k)]).toEqual([k, v]);
  // Not defined: the node's own mirror writes always use its inter-broker listener.
  expect(new BrokerConfig([['mirror.admin.listener.name', 'INTERNAL']]).warnings.map((w) => w.key)).toEqual(['mirror.admin.listener.name']);
});

it('refuses invalid mirror values', () => {
  expect(() => new BrokerConfig([['mirror.num.replica.fetchers', '0']])).toThrow(/mirror.num.replica.fetchers/);
  expect(() => new BrokerConfig([['mirror.failed.retry.max.attempts', '-1']])).toThrow(/mirror.failed.retry.max.attempts/);
  expect(() => new BrokerConfig([['mirror.metadata.refresh.interval.ms', 'soon']])).toThrow(/mirror.metadata.refresh.interval.ms/);
  expect(() => new BrokerConfig([['mirror.fetch.wait.max.ms', '-5']])).toThrow(/mirror.fetch.wait.max.ms/);
  expect(new BrokerConfig([['mirror.failed.retry.max.attempts', '0']]).int('mirror.failed.retry.max.attempts')).toBe(0);
});

it('passes static values and defaults to the mirror code through the coordinator host', () => {
  expect(mirrorView([])).toEqual({
    stateTopicPartitions: 50,
    metadataRefreshIntervalMs: 60_000,
    failedRetryInitialBackoffMs: 1000,
    failedRetryMaxBackoffMs: 300_000,
    failedRetryMaxAttempts: 100,
    numReplicaFetchers: 1,
    fetchBackoffMs: 1000,
    fetchWaitMaxMs: 1000,
    fetchMinBytes: 1,
    fetchResponseMaxBytes: 10 * 1024 * 1024,
    fetchMaxBytes: 1024 * 1024,
    socketTimeoutMs: 30_000,
  });
  const v = mirrorView([
    ['mirror.metadata.refresh.interval.ms', '2500'],
    ['mirror.failed.retry.max.attempts', '7'],
    ['mirror.fetch.wait.max.ms', '250'],
    ['mirror.socket.timeout.ms', '4000'],
    ['mirror.num.replica.fetchers', '2'],
  ]);
  expect(v).toMatchObject({ metadataRefreshIntervalMs: 2500, failedRetryMaxAttempts: 7, fetchWaitMaxMs: 250, socketTimeoutMs: 4000, numReplicaFetchers: 2 });
});

it('a node started with mirror keys logs none of them as unknown', async () => {
  const node = await startNode({ overrides: { 'mirror.metadata.refresh.interval.ms': 5000, 'mirror.failed.retry.max.attempts': 3, 'mirror.fetch.max.bytes': 65536, 'mirror.socket.timeout.ms': 9000 } });
  try {
    expect(node.logs()).not.toMatch(/unknown configuration key 'mirror\./);
  } finally {
    await node.destroy();
  }
});
