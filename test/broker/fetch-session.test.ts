/**
 * KIP-227 fetch sessions on a real node over TCP: every case of test/interop/fetch-session-cases.ts
 * (the replies Apache Kafka gives, checked against it by the differential runner).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNode, type RunningNode } from '../helpers/node.js';
import { SESSION_CASES } from '../interop/fetch-session-cases.js';
import { SessionProbe } from '../interop/fetch-session-probe.js';

let node: RunningNode;

beforeAll(async () => {
  node = await startNode({ overrides: { 'num.partitions': 1 } });
}, 180_000);
afterAll(async () => {
  await node?.destroy();
});

describe('fetch sessions answer as Apache Kafka does', () => {
  for (const c of SESSION_CASES) {
    it(c.name, async () => {
      const probe = await SessionProbe.connect(node.port);
      try {
        expect(await c.run(probe, c.name)).toEqual(c.expected);
      } finally {
        probe.close();
      }
    });
  }
});
