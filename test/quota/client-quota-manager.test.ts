/**
 * The quota arithmetic and precedence of src/quota against Kafka's ClientQuotaManager and
 * ControllerMutationQuotaManager: which quota applies to a (user, client id), who shares a rate,
 * the throttle time `(observed - bound) / bound * window`, and the token bucket's debt.
 */
import { describe, expect, it } from 'vitest';
import { ClientQuotaManager, QuotaLimits, type QuotaEntity, type QuotaSource } from '../../src/quota/client-quota-manager.js';
import { ControllerMutationQuotaManager } from '../../src/quota/controller-mutation-quota.js';

class Quotas implements QuotaSource {
  private readonly map = new Map<string, { entity: QuotaEntity[]; values: Map<string, number> }>();
  private v = 0;
  version(): number {
    return this.v;
  }
  entries(): Iterable<{ entity: QuotaEntity[]; values: Map<string, number> }> {
    return this.map.values();
  }
  set(user: string | null | undefined, clientId: string | null | undefined, key: string, value: number): void {
    const entity: QuotaEntity[] = [];
    if (user !== undefined) entity.push({ entityType: 'user', entityName: user });
    if (clientId !== undefined) entity.push({ entityType: 'client-id', entityName: clientId });
    const k = JSON.stringify(entity);
    const e = this.map.get(k) ?? { entity, values: new Map<string, number>() };
    e.values.set(key, value);
    this.map.set(k, e);
    this.v++;
  }
}

const KEY = 'producer_byte_rate';
const client = (user: string, clientId: string | null) => ({ principal: `User:${user}`, clientId });

describe('QuotaLimits precedence', () => {
  it('picks the most specific quota in Kafka order', () => {
    const q = new Quotas();
    const limits = new QuotaLimits(q, KEY);
    expect(limits.resolve(client('alice', 'app'))).toBeNull();
    q.set(undefined, null, KEY, 8);
    expect(limits.resolve(client('alice', 'app'))).toEqual({ bound: 8, sensorKey: 'client:app' });
    q.set(undefined, 'app', KEY, 7);
    expect(limits.resolve(client('alice', 'app'))?.bound).toBe(7);
    q.set(null, undefined, KEY, 6);
    expect(limits.resolve(client('alice', 'app'))).toEqual({ bound: 6, sensorKey: 'user:alice' });
    q.set(null, null, KEY, 5);
    expect(limits.resolve(client('alice', 'app'))?.bound).toBe(5);
    q.set(null, 'app', KEY, 4);
    expect(limits.resolve(client('alice', 'app'))?.bound).toBe(4);
    q.set('alice', undefined, KEY, 3);
    expect(limits.resolve(client('alice', 'app'))).toEqual({ bound: 3, sensorKey: 'user:alice' });
    q.set('alice', null, KEY, 2);
    expect(limits.resolve(client('alice', 'app'))?.bound).toBe(2);
    q.set('alice', 'app', KEY, 1);
    expect(limits.resolve(client('alice', 'app'))).toEqual({ bound: 1, sensorKey: 'both:alice\u0000app' });
    // Another user falls back to the defaults; another key has no quota at all.
    expect(limits.resolve(client('bob', 'app'))?.bound).toBe(4);
    expect(new QuotaLimits(q, 'consumer_byte_rate').resolve(client('alice', 'app'))).toBeNull();
  });
});

describe('ClientQuotaManager', () => {
  it("answers Kafka's throttle time and shares a client-id quota between users", () => {
    const q = new Quotas();
    q.set(undefined, 'app', KEY, 1000);
    const m = new ClientQuotaManager(new QuotaLimits(q, KEY), { samples: 11, windowMs: 1000 });
    // 5000 bytes at t=0: the rate is measured over 10 padded windows, 500 B/s: within the quota.
    expect(m.recordAndGetThrottleTimeMs(client('alice', 'app'), 5000, 0)).toBe(0);
    // Another user with the same client id shares the rate: 15000 B over 10 s is 1500 B/s,
    // (1500 - 1000) / 1000 * 10 s = 5 s.
    expect(m.recordAndGetThrottleTimeMs(client('bob', 'app'), 10000, 0)).toBe(5000);
    // A raised quota applies to the rate already measured.
    q.set(undefined, 'app', KEY, 3000);
    expect(m.recordAndGetThrottleTimeMs(client('alice', 'app'), 1, 0)).toBe(0);
    expect(m.maxValueInQuotaWindow(client('alice', 'app'))).toBe(30000);
    expect(m.recordAndGetThrottleTimeMs(client('alice', 'other'), 1e9, 0)).toBe(0);
  });

  it('caps the throttle where asked (the request quota caps at one window)', () => {
    const q = new Quotas();
    q.set(undefined, null, 'request_percentage', 1);
    const m = new ClientQuotaManager(new QuotaLimits(q, 'request_percentage'), { samples: 11, windowMs: 1000 }, 1000);
    expect(m.recordAndGetThrottleTimeMs(client('alice', 'x'), 100, 0)).toBe(1000);
  });
});

describe('ControllerMutationQuotaManager', () => {
  it('admits while the bucket is not in debt (strict) and always (permissive), with the debt as throttle', () => {
    const q = new Quotas();
    q.set(undefined, 'admin', 'controller_mutation_rate', 2);
    const m = new ControllerMutationQuotaManager(new QuotaLimits(q, 'controller_mutation_rate'), { samples: 2, windowMs: 1000 });
    let now = 0;
    const strict = m.newQuota(client('a', 'admin'), true, () => now);
    // Burst 2 * 2 * 1 s = 4 partitions; 10 are admitted and leave a debt of 6.
    expect(strict.tryRecord(10)).toBe(true);
    expect(strict.tryRecord(1)).toBe(false);
    expect(strict.throttleTimeMs).toBe(3000);
    now = 3000;
    expect(m.newQuota(client('a', 'admin'), true, () => now).tryRecord(1)).toBe(true);
    const permissive = m.newQuota(client('a', 'admin'), false, () => now);
    expect(permissive.tryRecord(5)).toBe(true);
    expect(permissive.throttleTimeMs).toBe(3000);
  });
});
