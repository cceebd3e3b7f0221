/**
 * The Apache Kafka launcher itself, on the newest 4.x Maven Central serves (the 4.1 line is the shared
 * broker every other file uses): it formats, starts, answers real clients, and stops on SIGTERM.
 */
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, test } from 'vitest';
import { startKafkaBroker, type KafkaBroker } from './kafka-broker.js';
import { javaScenario } from './lib/java.js';
import { KAFKA_NEWEST_VERSION } from './lib/paths.js';
import { probeApiVersions } from './lib/net.js';

describe(`Apache Kafka ${KAFKA_NEWEST_VERSION} launcher`, () => {
  let broker: KafkaBroker | undefined;
  afterAll(async () => {
    await broker?.stop();
  });

  test('starts a single-node KRaft broker that serves the Java client', async () => {
    const started = Date.now();
    broker = await startKafkaBroker({ version: KAFKA_NEWEST_VERSION });
    console.log(`[interop] Apache Kafka ${KAFKA_NEWEST_VERSION} serving after ${Date.now() - started} ms`);
    expect(await probeApiVersions(broker.host, broker.port, 5000)).toBe(0);
    expect(await javaScenario('cluster', broker.bootstrap, {})).toEqual({ nodes: 1, hasClusterId: true, hasController: true });
    const obs = await javaScenario('produce', broker.bootstrap, { topic: 'newest-smoke', acks: 'all', compression: 'zstd', idempotent: 'true', count: '9' });
    expect(obs.produced).toEqual(['0:0', '1:0', '2:0', '0:1', '1:1', '2:1', '0:2', '1:2', '2:2']);
  });

  test('stops on SIGTERM, closing its port and removing its data directory', async () => {
    const b = broker;
    if (b === undefined) throw new Error('broker did not start');
    await b.stop();
    broker = undefined;
    await expect(probeApiVersions(b.host, b.port, 2000)).rejects.toThrow();
    expect(existsSync(b.dataDir)).toBe(false);
  });
});
