/** The node's count of fetch-session errors and its rate-limited warning (fetch-session-errors.ts). */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/common/logger.js';
import { FetchSessionErrors } from '../../src/broker/fetch-session-errors.js';

describe('fetch-session error counts', () => {
  it('counts per code, logs each at debug and warns at most once per interval with the totals', () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger({}, 'debug', (l) => lines.push(JSON.parse(l) as Record<string, unknown>));
    let now = 1_000_000;
    const errors = new FetchSessionErrors(log, 10_000, () => now);
    const d = { sessionId: 7, epoch: 3, expectedEpoch: 4, clientId: 'c', client: '127.0.0.1:1' };
    for (let i = 0; i < 1000; i++) errors.record(71, d);
    errors.record(70, { ...d, epoch: 1 });
    expect(errors.count(71)).toBe(1000);
    expect(errors.count(70)).toBe(1);
    expect(errors.count(106)).toBe(0);
    expect(errors.snapshot()).toEqual({ INVALID_FETCH_SESSION_EPOCH: 1000, FETCH_SESSION_ID_NOT_FOUND: 1 });
    expect(lines.filter((l) => l['level'] === 'debug')).toHaveLength(1001);
    let warns = lines.filter((l) => l['level'] === 'warn');
    expect(warns).toEqual([expect.objectContaining({ msg: 'fetch session errors answered', count: 1, last: 'INVALID_FETCH_SESSION_EPOCH', sessionId: 7 })]);
    now += 10_000;
    errors.record(106, d);
    warns = lines.filter((l) => l['level'] === 'warn');
    expect(warns).toHaveLength(2);
    // The second warning counts everything since the first, and carries the totals.
    expect(warns[1]).toMatchObject({
      count: 1001,
      last: 'FETCH_SESSION_TOPIC_ID_ERROR',
      totals: { INVALID_FETCH_SESSION_EPOCH: 1000, FETCH_SESSION_ID_NOT_FOUND: 1, FETCH_SESSION_TOPIC_ID_ERROR: 1 },
    });
  });
});
