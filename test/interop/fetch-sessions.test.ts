/**
 * KIP-227 fetch sessions over raw Fetch requests, against Apache Kafka and against Fjord: each case
 * of fetch-session-cases.ts must give Kafka's replies on both (so the expected replies are Kafka's
 * own), and Fjord's observations must equal Kafka's.
 *
 * Cache eviction is not compared here: Kafka splits its slots over 8 shards and fixes the eviction
 * time at 120 s (KafkaBroker.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS), so its rules are tested on
 * Fjord alone, with a short eviction time, in test/broker/fetch-session.test.ts.
 */
import { describe, expect } from 'vitest';
import { SESSION_CASES } from './fetch-session-cases.js';
import { SessionProbe, type SeenFetch } from './fetch-session-probe.js';
import { differentialTests, sharedKafka, useFjordNode, type Scenario } from './lib/scenario.js';

const fjord = useFjordNode();

describe('fetch sessions (raw protocol)', () => {
  for (const c of SESSION_CASES) {
    const scenario: Scenario<Record<string, SeenFetch>> = {
      id: `raw/fetch-session-${c.name}`,
      async run(target, topic) {
        const probe = await SessionProbe.connect(target.port);
        try {
          return await c.run(probe, topic);
        } finally {
          probe.close();
        }
      },
      check(obs) {
        expect(obs).toEqual(c.expected);
      },
      timeoutMs: 60_000,
    };
    differentialTests(scenario, sharedKafka, fjord);
  }
});
