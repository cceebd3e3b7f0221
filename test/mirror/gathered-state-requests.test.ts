import { describe, expect, it } from 'vitest';
import { StateRequestGatherer, type GatheredOutcome } from '../../src/mirror/gathered-state-requests.js';

/** A target whose requests are answered when the test says so. */
function target() {
  const requests: { entries: string[]; answer: (o: GatheredOutcome<string>[] | Error) => void }[] = [];
  const send = (entries: string[]) =>
    new Promise<readonly GatheredOutcome<string>[]>((resolve, reject) => {
      requests.push({ entries, answer: (o) => (o instanceof Error ? reject(o) : resolve(o)) });
    });
  return { requests, send };
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('StateRequestGatherer', () => {
  it('sends the calls of one turn as one request, and those made while it is out as the next, each settled with its own answer', async () => {
    const g = new StateRequestGatherer<string, string>((fn) => void setImmediate(fn));
    const t = target();
    const first = ['a', 'b', 'c'].map((p) => g.submit('node-2', p, p, t.send));
    await turn();
    expect(t.requests.map((r) => r.entries)).toEqual([['a', 'b', 'c']]);
    // Made while the first request is out: they wait for its answer.
    const second = ['d', 'e'].map((p) => g.submit('node-2', p, p, t.send));
    await turn();
    expect(t.requests).toHaveLength(1);
    t.requests[0]!.answer([
      { ok: true, value: 'A' },
      { ok: false, error: new Error('fenced b') },
      { ok: true, value: 'C' },
    ]);
    expect(await Promise.allSettled(first)).toEqual([
      { status: 'fulfilled', value: 'A' },
      { status: 'rejected', reason: new Error('fenced b') },
      { status: 'fulfilled', value: 'C' },
    ]);
    await turn();
    expect(t.requests.map((r) => r.entries)).toEqual([['a', 'b', 'c'], ['d', 'e']]);
    t.requests[1]!.answer(new Error('node 2 unreachable'));
    for (const r of await Promise.allSettled(second)) expect(r).toEqual({ status: 'rejected', reason: new Error('node 2 unreachable') });
  });

  it('keeps a partition\'s calls in order: its second call goes out with the next request', async () => {
    const g = new StateRequestGatherer<string, string>((fn) => void setImmediate(fn));
    const t = target();
    const calls = [g.submit('n', 'p0', 'p0 LME', t.send), g.submit('n', 'p1', 'p1 state', t.send), g.submit('n', 'p0', 'p0 state', t.send), g.submit('n', 'p2', 'p2 state', t.send)];
    await turn();
    expect(t.requests.map((r) => r.entries)).toEqual([['p0 LME', 'p1 state']]);
    t.requests[0]!.answer([
      { ok: true, value: '1' },
      { ok: true, value: '2' },
    ]);
    await calls[1];
    await turn();
    expect(t.requests.map((r) => r.entries)).toEqual([['p0 LME', 'p1 state'], ['p0 state', 'p2 state']]);
    t.requests[1]!.answer([
      { ok: true, value: '3' },
      { ok: true, value: '4' },
    ]);
    expect(await Promise.all(calls)).toEqual(['1', '2', '3', '4']);
  });

  it('gathers per target: calls to another node go in their own request', async () => {
    const g = new StateRequestGatherer<string, string>((fn) => void setImmediate(fn));
    const two = target();
    const three = target();
    const calls = [g.submit('node-2', 'a', 'a', two.send), g.submit('node-3', 'b', 'b', three.send), g.submit('node-2', 'c', 'c', two.send)];
    await turn();
    expect(two.requests.map((r) => r.entries)).toEqual([['a', 'c']]);
    expect(three.requests.map((r) => r.entries)).toEqual([['b']]);
    two.requests[0]!.answer([
      { ok: true, value: 'A' },
      { ok: true, value: 'C' },
    ]);
    three.requests[0]!.answer([{ ok: true, value: 'B' }]);
    expect(await Promise.all(calls)).toEqual(['A', 'B', 'C']);
  });
});
