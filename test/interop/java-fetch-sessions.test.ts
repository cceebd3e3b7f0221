/**
 * The Java consumer whose fetch session changes mid-stream (FetchSessions.java): seeks, pauses and
 * resumes between polls shorter than its fetch wait, the same with its connection cut by request
 * timeouts whenever the producer rests (each cut makes it reset its session with a full fetch that
 * names the old one: the request issue 11's livelock answered INVALID_FETCH_SESSION_EPOCH for
 * ever, so the consumer stopped consuming), and a group under load that members join and
 * leave, with the cooperative-sticky assignor (classic protocol) and with the KIP-848 consumer
 * protocol. On Apache Kafka and on Fjord every produced record must be consumed, and the Fjord node
 * must have answered no more than a handful of fetch-session errors (counted in its log, where it
 * writes each at debug): a client caught resending a request its session cannot serve (issue 11's
 * livelock) stops consuming and piles them up.
 */
import { readFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import type { FjordNode } from './fjord-node.js';
import { LOG4J2_CONFIG, clientsClasspath } from './lib/paths.js';
import { lastJsonLine, run, tail } from './lib/run.js';
import { differentialTests, sharedKafka, useFjordNode, type Scenario } from './lib/scenario.js';
import type { Target } from './lib/target.js';

/** More than this many session errors in one scenario is a client stuck on its session. */
const HANDFUL = 5;

// The node this file starts logs each fetch-session error at debug.
process.env['FJORD_LOG_LEVEL'] = 'debug';
const fjord = useFjordNode();

type Obs = Record<string, unknown>;

async function fetchSessions(name: string, bootstrap: string, opts: Readonly<Record<string, string>>): Promise<Obs> {
  const args = [
    '-Xmx384m',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`,
    `-Dfjord.loglevel=${process.env['FJORD_INTEROP_LOG_LEVEL'] ?? 'ERROR'}`,
    '-cp',
    clientsClasspath(),
    'fjord.interop.FetchSessions',
    name,
    `bootstrap=${bootstrap}`,
  ];
  for (const [k, v] of Object.entries(opts)) args.push(`${k}=${v}`);
  const r = await run('java', args, { timeoutMs: 240_000 });
  const obs = lastJsonLine(r);
  if (r.code !== 0 || 'error' in obs) throw new Error(`FetchSessions ${name} failed: ${String(obs['error'])}: ${String(obs['message'])}\n${tail(r.stderr, 15)}`);
  return obs;
}

function sessionErrors(node: FjordNode): number {
  return readFileSync(node.logFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"msg":"fetch session error"')).length;
}

/** Runs the Java scenario; on Fjord, fails when the node answered more than a handful of session errors meanwhile. */
function scenario(id: string, name: string, opts: Readonly<Record<string, string>>, check: (obs: Obs) => void): Scenario<Obs> {
  return {
    id: `java/fetch-session-${id}`,
    async run(target: Target, topic: string) {
      const node = target.kind === 'fjord' ? fjord.get() : null;
      const before = node === null ? 0 : sessionErrors(node);
      const obs = await fetchSessions(name, target.bootstrap, { ...opts, topic });
      if (node !== null) {
        const errors = sessionErrors(node) - before;
        console.log(`[interop] ${id}: the node answered ${errors} fetch-session errors`);
        if (errors > HANDFUL) throw new Error(`the node answered ${errors} fetch-session errors during ${id} (at most ${HANDFUL} expected)`);
      }
      return obs;
    },
    check,
    timeoutMs: 300_000,
  };
}

describe('Java consumers whose fetch sessions are reset mid-stream', () => {
  differentialTests(
    scenario('seek-pause-resume', 'seek', { count: '2000' }, (obs) => {
      expect(obs).toEqual({ produced: 2000, missing: 0, seeked: true, paused: true });
    }),
    sharedKafka,
    fjord,
  );
  differentialTests(
    scenario('cut-and-reset', 'seek', { count: '2000', cut: 'true' }, (obs) => {
      expect(obs).toEqual({ produced: 2000, missing: 0, seeked: true, paused: true });
    }),
    sharedKafka,
    fjord,
  );
  for (const protocol of ['classic', 'consumer'] as const) {
    differentialTests(
      scenario(`rebalance-${protocol}`, 'rebalance', { protocol, count: '6000' }, (obs) => {
        expect(obs).toEqual({ produced: 6000, missing: 0, rebalances: 3 });
      }),
      sharedKafka,
      fjord,
    );
  }
});
