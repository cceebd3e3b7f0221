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
  {
    name: 'incremental-sends-only-changes',
    async run(p, prefix) {
      const t = await p.createTopic(`${prefix}-t`, 2, 't');
      const full = await p.fetch({ sessionId: 0, epoch: 0, partitions: [{ topic: t, partition: 0 }, { topic: t, partition: 1 }] });
      const id = full.sessionId;
      const nothing = await p.fetch({ sessionId: id, epoch: 1 });
      await p.produce(t, 1);
      const news = await p.fetch({ sessionId: id, epoch: 2 });
      // Moving the fetch offset past the new record: no records, the high watermark already sent.
      const moved = await p.fetch({ sessionId: id, epoch: 3, partitions: [{ topic: t, partition: 1, fetchOffset: 1n }] });
      const replayed = await p.fetch({ sessionId: id, epoch: 3 });
      return { full: seen(full), nothing: seen(nothing), news: seen(news), moved: seen(moved), replayed: seen(replayed) };
    },
    expected: {
      full: ok('A', ['t:0 e0 hw0 empty', 't:1 e0 hw0 empty']),
      nothing: ok('A'),
      news: ok('A', ['t:1 e0 hw1 records']),
      moved: ok('A'),
      replayed: fail(71),
    },
  },
  {
    name: 'close-with-final-epoch',
    async run(p, prefix) {
      const t = await p.createTopic(`${prefix}-t`, 1, 't');
      const full = await p.fetch({ sessionId: 0, epoch: 0, partitions: [{ topic: t, partition: 0 }] });
      const closing = await p.fetch({ sessionId: full.sessionId, epoch: -1, partitions: [{ topic: t, partition: 0 }] });
      return { full: seen(full), closing: seen(closing), after: seen(await p.fetch({ sessionId: full.sessionId, epoch: 1 })) };
    },
    expected: {
      full: ok('A', ['t:0 e0 hw0 empty']),
      closing: ok('none', ['t:0 e0 hw0 empty']),
      after: fail(70),
    },
  },
  {
    name: 'sessionless-full-fetch',
    async run(p, prefix) {
      const t = await p.createTopic(`${prefix}-t`, 2, 't');
      await p.produce(t, 0, 2);
      const parts = [{ topic: t, partition: 0 }, { topic: t, partition: 1 }];
      return { first: seen(await p.fetch({ sessionId: 0, epoch: -1, partitions: parts })), again: seen(await p.fetch({ sessionId: 0, epoch: -1, partitions: parts })) };
    },
    expected: {
      first: ok('none', ['t:0 e0 hw2 records', 't:1 e0 hw0 empty']),
      again: ok('none', ['t:0 e0 hw2 records', 't:1 e0 hw0 empty']),
    },
  },
  {
    // Only epochs 0 and -1 make a request full (FetchMetadata.isFull); any other epoch looks the
    // session up, and session id 0 is never in the cache.
    name: 'unknown-session',
    async run(p, prefix) {
      const t = await p.createTopic(`${prefix}-t`, 1, 't');
      const parts = [{ topic: t, partition: 0 }];
      return {
        unknownId: seen(await p.fetch({ sessionId: 0x1234567, epoch: 1, partitions: parts })),
        zeroIdEpoch5: seen(await p.fetch({ sessionId: 0, epoch: 5, partitions: parts })),
        zeroIdEpochMinus2: seen(await p.fetch({ sessionId: 0, epoch: -2, partitions: parts })),
      };
    },
    expected: { unknownId: fail(70), zeroIdEpoch5: fail(70), zeroIdEpochMinus2: fail(70) },
  },
  {
    name: 'wrong-epoch-keeps-the-session',
    async run(p, prefix) {
      const t = await p.createTopic(`${prefix}-t`, 1, 't');
      const full = await p.fetch({ sessionId: 0, epoch: 0, partitions: [{ topic: t, partition: 0 }] });
      const id = full.sessionId;
      return {
        full: seen(full),
        ahead: seen(await p.fetch({ sessionId: id, epoch: 5 })),
        expected: seen(await p.fetch({ sessionId: id, epoch: 1 })),
        replay: seen(await p.fetch({ sessionId: id, epoch: 1 })),
        next: seen(await p.fetch({ sessionId: id, epoch: 2 })),
      };
    },
    expected: { full: ok('A', ['t:0 e0 hw0 empty']), ahead: fail(71), expected: ok('A'), replay: fail(71), next: ok('A') },
  },
  {
    // A session opened by name (v12) cannot be continued by id (v13+), nor the other way round.
    name: 'topic-id-mismatch',
    async run(p, prefix) {
      const t = await p.createTopic(`${prefix}-t`, 1, 't');
      const byName = await p.fetch({ version: 12, sessionId: 0, epoch: 0, partitions: [{ topic: t, partition: 0 }] });
      const byId = await p.fetch({ version: 13, sessionId: 0, epoch: 0, partitions: [{ topic: t, partition: 0 }] });
      return {
        byName: seen(byName),
        byNameThenId: seen(await p.fetch({ version: 13, sessionId: byName.sessionId, epoch: 1 })),
        byNameStillUsable: seen(await p.fetch({ version: 12, sessionId: byName.sessionId, epoch: 1 })),
        byId: seen(byId),
        byIdThenName: seen(await p.fetch({ version: 12, sessionId: byId.sessionId, epoch: 1 })),
        byIdStillUsable: seen(await p.fetch({ version: 16, sessionId: byId.sessionId, epoch: 1 })),
      };
    },
    expected: {
      byName: ok('A', ['t:0 e0 hw0 empty']),
      byNameThenId: fail(106),
      byNameStillUsable: ok('A'),
      byId: ok('B', ['t:0 e0 hw0 empty']),
      byIdThenName: fail(106),
      byIdStillUsable: ok('B'),
    },
  },
  {
    // Added partitions are sent once (their cached high watermark starts at -1); forgotten ones are
    // never sent again; forgetting the last one closes the session (a sessionless answer).
    name: 'add-forget-and-empty',
    async run(p, prefix) {
      const t = await p.createTopic(`${prefix}-t`, 2, 't');
      const full = await p.fetch({ sessionId: 0, epoch: 0, partitions: [{ topic: t, partition: 0 }] });
      const id = full.sessionId;
      const added = await p.fetch({ sessionId: id, epoch: 1, partitions: [{ topic: t, partition: 1 }] });
      const forgot = await p.fetch({ sessionId: id, epoch: 2, forgotten: [{ topic: t, partitions: [0] }] });
      await p.produce(t, 0);
      await p.produce(t, 1);
      const news = await p.fetch({ sessionId: id, epoch: 3 });
      const emptied = await p.fetch({ sessionId: id, epoch: 4, forgotten: [{ topic: t, partitions: [1] }] });
      return { full: seen(full), added: seen(added), forgot: seen(forgot), news: seen(news), emptied: seen(emptied), after: seen(await p.fetch({ sessionId: id, epoch: 5 })) };
    },
    expected: {
      full: ok('A', ['t:0 e0 hw0 empty']),
      added: ok('A', ['t:1 e0 hw0 empty']),
      forgot: ok('A'),
      news: ok('A', ['t:1 e0 hw1 records']),
      emptied: ok('none'),
      after: fail(70),
    },
  },
  {
    // A partition with an error is in every response of the session, not only the first.
    name: 'errors-are-always-sent',
    async run(p, prefix) {
      const t = await p.createTopic(`${prefix}-t`, 1, 't');
      const full = await p.fetch({ sessionId: 0, epoch: 0, partitions: [{ topic: t, partition: 0 }, { topic: t, partition: 7 }] });
      return { full: seen(full), inc1: seen(await p.fetch({ sessionId: full.sessionId, epoch: 1 })), inc2: seen(await p.fetch({ sessionId: full.sessionId, epoch: 2 })) };
    },
    expected: {
      full: ok('A', ['t:0 e0 hw0 empty', 't:7 e3 hw-1 empty']),
      inc1: ok('A', ['t:7 e3 hw-1 empty']),
      inc2: ok('A', ['t:7 e3 hw-1 empty']),
    },
  },
  {
    // A partition that returned records moves to the end of the session's order, so the next
    // responses start with the others (KIP-227 fairness; IncrementalFetchContext).
    name: 'records-move-a-partition-last',
    async run(p, prefix) {
      const t = await p.createTopic(`${prefix}-t`, 2, 't');
      const full = await p.fetch({ sessionId: 0, epoch: 0, partitions: [{ topic: t, partition: 0 }, { topic: t, partition: 1 }] });
      await p.produce(t, 0);
      const first = await p.fetch({ sessionId: full.sessionId, epoch: 1 });
      await p.produce(t, 0);
      await p.produce(t, 1);
      return { full: seen(full), first: seen(first), both: seen(await p.fetch({ sessionId: full.sessionId, epoch: 2 })) };
    },
    expected: {
      full: ok('A', ['t:0 e0 hw0 empty', 't:1 e0 hw0 empty']),
      first: ok('A', ['t:0 e0 hw1 records']),
      both: ok('A', ['t:1 e0 hw1 records', 't:0 e0 hw2 records']),
    },
  },
  {
    // A session keyed by topic id outlives the topic: once it is deleted, its partitions come back
    // with UNKNOWN_TOPIC_OR_PARTITION in every response (the session still knows the name), not a
    // session error.
    name: 'deleted-topic',
    async run(p, prefix) {
      const t = await p.createTopic(`${prefix}-t`, 1, 't');
      const full = await p.fetch({ sessionId: 0, epoch: 0, partitions: [{ topic: t, partition: 0 }] });
      await p.deleteTopic(t);
      // Deletion reaches the fetch path a moment after DeleteTopics answers: poll until it shows.
      let epoch = 1;
      let gone = await p.fetch({ sessionId: full.sessionId, epoch: epoch++ });
      for (let i = 0; gone.errorCode === 0 && gone.partitions.length === 0 && i < 100; i++) {
        await new Promise((r) => setTimeout(r, 100));
        gone = await p.fetch({ sessionId: full.sessionId, epoch: epoch++ });
      }
      return { full: seen(full), gone: seen(gone), again: seen(await p.fetch({ sessionId: full.sessionId, epoch })) };
    },
    expected: {
      full: ok('A', ['t:0 e0 hw0 empty']),
      gone: ok('A', ['t:0 e3 hw-1 empty']),
      again: ok('A', ['t:0 e3 hw-1 empty']),
    },
  },
];
