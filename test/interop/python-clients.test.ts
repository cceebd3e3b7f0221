/** confluent-kafka (librdkafka) and kafka-python, pinned from PyPI in the project-local virtualenv. */
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { ROOT, VENV_PYTHON } from './lib/paths.js';
import { lastJsonLine, run, tail } from './lib/run.js';
import { differentialTests, sharedKafka, useFjordNode, type Scenario } from './lib/scenario.js';

type Obs = Record<string, unknown>;
const SCRIPT = join(ROOT, 'test/interop/python/scenarios.py');
const COUNT = 20;

function pythonScenario(client: 'confluent-kafka' | 'kafka-python', duplicateError: string): Scenario<Obs> {
  return {
    id: `python/${client}`,
    async run(t, topic) {
      const r = await run(VENV_PYTHON, [SCRIPT, client, t.bootstrap, topic], { timeoutMs: 120_000 });
      const obs = lastJsonLine(r);
      if (r.code !== 0 || 'error' in obs) throw new Error(`${client}: ${String(obs.error)}: ${String(obs.message)}\n${tail(r.stderr, 10)}`);
      return obs;
    },
    check(obs) {
      expect(obs.partitions).toBe(3);
      expect(obs.createDuplicate).toBe(duplicateError);
      const idx = [...Array(COUNT).keys()];
      expect(obs.produced).toEqual(idx.map((i) => `${i % 3}:${Math.floor(i / 3)}`));
      const byPartition = [0, 1, 2].flatMap((p) => idx.filter((i) => i % 3 === p));
      expect(obs.consumed).toEqual(
        byPartition.map((i) => ({
          partition: i % 3,
          offset: Math.floor(i / 3),
          key: `k${i}`,
          value: `v${i}`,
          timestamp: 1_700_000_000_000 + i,
          headers: [`i=${i}`],
        })),
      );
      expect(obs.committed).toEqual({ '0': 7, '1': 7, '2': 6 });
      expect(obs.watermarks).toEqual({ '0': [0, 7], '1': [0, 7], '2': [0, 6] });
    },
  };
}

describe('Python clients', () => {
  const fjord = useFjordNode();
  differentialTests(pythonScenario('confluent-kafka', 'TOPIC_ALREADY_EXISTS'), sharedKafka, fjord);
  differentialTests(pythonScenario('kafka-python', 'TopicAlreadyExistsError'), sharedKafka, fjord);
});
