/** Debian's kcat (librdkafka 2.0.2, old protocol versions): metadata, keyed produce with headers, consume. */
import { describe, expect } from 'vitest';
import { run, tail, type RunResult } from './lib/run.js';
import { differentialTests, sharedKafka, useFjordNode, type Scenario } from './lib/scenario.js';

type Obs = Record<string, unknown>;

function ok(what: string, r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`kcat ${what} failed (exit ${r.code}${r.timedOut ? ', timed out' : ''}):\n${tail(r.stderr, 15)}`);
  return r;
}

/** kcat never gives up on its own: every call is bounded by librdkafka timeouts and a kill deadline. */
function kcat(args: readonly string[], input?: string): Promise<RunResult> {
  return run('kcat', ['-m', '10', '-X', 'socket.connection.setup.timeout.ms=3000', ...args], {
    timeoutMs: 60_000,
    ...(input === undefined ? {} : { input }),
  });
}

const LINES = ['a:apple', 'b:banana', 'c:cherry', 'd:date', 'e:elderberry'];

const SCENARIOS: Scenario<Obs>[] = [
  {
    id: 'kcat/produce-consume',
    async run(t, topic) {
      // Auto-created on first use (kcat cannot create topics); partition 0 chosen explicitly.
      ok('produce', await kcat(['-P', '-b', t.bootstrap, '-t', topic, '-p', '0', '-K:', '-z', 'snappy', '-H', 'src=kcat',
        '-X', 'message.timeout.ms=20000'], LINES.join('\n') + '\n'));
      const r = ok('consume', await kcat(['-C', '-b', t.bootstrap, '-t', topic, '-p', '0', '-o', 'beginning', '-e',
        '-c', String(LINES.length), '-f', '%p|%o|%k|%s|%h\n']));
      return { records: r.stdout.trim().split('\n') };
    },
    check(obs) {
      expect(obs.records).toEqual(LINES.map((l, i) => `0|${i}|${l.replace(':', '|')}|src=kcat`));
    },
  },
  {
    id: 'kcat/metadata',
    async run(t, topic) {
      ok('produce', await kcat(['-P', '-b', t.bootstrap, '-t', topic, '-X', 'message.timeout.ms=20000'], 'x\n'));
      const r = ok('metadata', await kcat(['-L', '-J', '-b', t.bootstrap, '-t', topic]));
      const md = JSON.parse(r.stdout) as {
        brokers: { id: number; name: string }[];
        topics: { topic: string; partitions: { partition: number; leader: number; replicas: unknown[]; isrs: unknown[] }[] }[];
      };
      const tp = md.topics.find((x) => x.topic === topic);
      return {
        brokers: md.brokers.map((b) => ({ id: b.id, isBootstrap: b.name === t.bootstrap })),
        partitions: tp?.partitions.map((p) => ({ partition: p.partition, leader: p.leader, replicas: p.replicas.length, isrs: p.isrs.length })),
      };
    },
    check(obs) {
      expect(obs.brokers).toEqual([{ id: 1, isBootstrap: true }]);
      // num.partitions=4 on both brokers, as librdkafka's test suite expects for auto-created topics.
      expect(obs.partitions).toEqual([0, 1, 2, 3].map((p) => ({ partition: p, leader: 1, replicas: 1, isrs: 1 })));
    },
  },
];

describe('kcat', () => {
  const fjord = useFjordNode();
  for (const s of SCENARIOS) differentialTests(s, sharedKafka, fjord);
});
