/**
 * KIP-227 fetch-session cases as Apache Kafka's FetchManager.newContext, FetchSession.update and
 * CachedPartition.maybeUpdateResponseData answer them, each a short dialogue of raw Fetch requests
 * with what the broker must reply. The same cases run against Fjord in test/broker and against
 * Apache Kafka and Fjord side by side in test/interop/fetch-sessions.test.ts, so the expected
 * replies below are checked against the real broker too.
 *
 * Error codes: 70 FETCH_SESSION_ID_NOT_FOUND, 71 INVALID_FETCH_SESSION_EPOCH,
 * 106 FETCH_SESSION_TOPIC_ID_ERROR, 3 UNKNOWN_TOPIC_OR_PARTITION.
 */
import { seen, type SessionProbe, type SeenFetch } from './fetch-session-probe.js';

export interface SessionCase {
  readonly name: string;
  run(probe: SessionProbe, topicPrefix: string): Promise<Record<string, SeenFetch>>;
  readonly expected: Record<string, SeenFetch>;
}

const ok = (session: string, partitions: string[] = []): SeenFetch => ({ errorCode: 0, session, partitions });
const fail = (errorCode: number): SeenFetch => ({ errorCode, session: 'none', partitions: [] });

export const SESSION_CASES: readonly SessionCase[] = [
  {
    // The livelock of issue 11: a client that resets its session sends (X, 0); Kafka closes X and
    // opens a new session instead of answering INVALID_FETCH_SESSION_EPOCH forever.
    name: 'close-and-reopen',
    async run(p, prefix) {
      const t = await p.createTopic(`${prefix}-t`, 2, 't');
      await p.produce(t, 0);
      const first = await p.fetch({ sessionId: 0, epoch: 0, partitions: [{ topic: t, partition: 0 }, { topic: t, partition: 1 }] });
      const reopened = await p.fetch({ sessionId: first.sessionId, epoch: 0, partitions: [{ topic: t, partition: 0, fetchOffset: 1n }, { topic: t, partition: 1 }] });
      return {
        first: seen(first),
        reopened: seen(reopened),
        oldSession: seen(await p.fetch({ sessionId: first.sessionId, epoch: 1 })),
        newSession: seen(await p.fetch({ sessionId: reopened.sessionId, epoch: 1 })),
      };
    },
    expected: {
      first: ok('A', ['t:0 e0 hw1 records', 't:1 e0 hw0 empty']),
      reopened: ok('B', ['t:0 e0 hw1 empty', 't:1 e0 hw0 empty']),
      oldSession: fail(70),
      newSession: ok('B'),
    },
  },
];
