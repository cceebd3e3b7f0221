/**
 * The mirror replication throttle's bucket on a hand-moved clock: no wait while unlimited or in
 * credit, a wait that pays back the debt at the rate, a rate changed at run time applying to the
 * next check, and no wait longer than a second.
 */
import { describe, expect, it } from 'vitest';
import { ReplicationThrottle } from '../../src/quota/replication-throttle.js';
import { ManualClock } from '../helpers/manual-clock.js';

describe('ReplicationThrottle', () => {
  it('holds fetches back until the bytes taken are paid for at the current rate', () => {
    const clock = new ManualClock();
    let rate = Number('9223372036854775807');
    const t = new ReplicationThrottle(() => rate, clock);
    t.record(50_000_000);
    expect(t.delayMs()).toBe(0);

    rate = 1000;
    expect(t.delayMs()).toBe(0);
    t.record(500);
    expect(t.delayMs()).toBe(500);
    clock.advance(250);
    expect(t.delayMs()).toBe(250);
    clock.advance(250);
    expect(t.delayMs()).toBe(0);

    t.record(5000);
    expect(t.delayMs()).toBe(1000); // capped: a raised rate is seen within a second
    rate = 10_000;
    expect(t.delayMs()).toBe(500);
    clock.advance(500);
    expect(t.delayMs()).toBe(0);

    // Idle credit is capped at one second's worth.
    clock.advance(60_000);
    t.record(20_000);
    expect(t.delayMs()).toBe(1000);
  });
});
