/**
 * Client quotas by user and client id, as Kafka's ClientQuotaManager and its DefaultQuotaCallback
 * resolve them. The most specific quota that is set applies, in Kafka's order:
 *
 *   user + client-id, user + default client-id, user, default user + client-id,
 *   default user + default client-id, default user, client-id, default client-id
 *
 * and the level that matched decides who shares the measured rate (Kafka's metric tags): a
 * quota on a user alone is shared by all of that user's client ids, a quota on a client id alone by
 * every user with that client id, a (user, client-id) quota by that pair; a default applies to
 * each user or client id on its own. The limits are read from the metadata image on each
 * recording, so a change made with AlterClientQuotas applies at once to the rate already measured
 * (Kafka updates the sensor's quota in place).
 *
 * Concurrency contract: used from the node's one event loop only.
 */
import { SampledRate, type QuotaWindow } from './sampled-rate.js';

export interface QuotaEntity {
  readonly entityType: string;
  /** null: the default entity of that type. */
  readonly entityName: string | null;
}

/** The client quotas of the metadata image (ClientQuotaRecords), and a version that changes with them. */
export interface QuotaSource {
  version(): number;
  entries(): Iterable<{ readonly entity: readonly QuotaEntity[]; readonly values: ReadonlyMap<string, number> }>;
}

/** Who a request is from, as quotas see it. */
export interface QuotaClient {
  /** The principal, `User:<name>`; quotas name the user without the `User:` type. */
  readonly principal: string;
  readonly clientId: string | null;
}

/** The quota that applies to a client: its bound, and the key of the rate it shares. */
interface ResolvedQuota {
  readonly bound: number;
  readonly sensorKey: string;
}

const DEFAULT = '\u0000default';

/** Kafka drops sensors unused this long (ClientQuotaManager.InactiveSensorExpirationTimeSeconds). */
const INACTIVE_SENSOR_MS = 3_600_000;

function entityKey(user: string | undefined, clientId: string | undefined): string {
  return `${user === undefined ? '' : `u=${user}`}|${clientId === undefined ? '' : `c=${clientId}`}`;
}

function userOf(principal: string): string {
  const i = principal.indexOf(':');
  return i < 0 ? principal : principal.slice(i + 1);
}

/** The quotas of one quota key (`producer_byte_rate`, ...), indexed by entity, rebuilt when the image changes. */
export class QuotaLimits {
  private index = new Map<string, number>();
  private indexedVersion = Number.NaN;

  constructor(
    private readonly source: QuotaSource,
    readonly quotaKey: string,
  ) {}

  /** Kafka's precedence; null when no quota of this key applies to the client. */
  resolve(client: QuotaClient): ResolvedQuota | null {
    this.refresh();
    if (this.index.size === 0) return null;
    const user = userOf(client.principal);
    const clientId = client.clientId ?? '';
    const pair = `${user}\u0000${clientId}`;
    const levels: [string | undefined, string | undefined, string][] = [
      [user, clientId, `both:${pair}`],
      [user, DEFAULT, `both:${pair}`],
      [user, undefined, `user:${user}`],
      [DEFAULT, clientId, `both:${pair}`],
      [DEFAULT, DEFAULT, `both:${pair}`],
      [DEFAULT, undefined, `user:${user}`],
      [undefined, clientId, `client:${clientId}`],
      [undefined, DEFAULT, `client:${clientId}`],
    ];
    for (const [u, c, sensorKey] of levels) {
      const bound = this.index.get(entityKey(u, c));
      if (bound !== undefined) return { bound, sensorKey };
    }
    return null;
  }

  private refresh(): void {
    const v = this.source.version();
    if (v === this.indexedVersion) return;
    this.indexedVersion = v;
    const index = new Map<string, number>();
    for (const { entity, values } of this.source.entries()) {
      const value = values.get(this.quotaKey);
      if (value === undefined) continue;
      let user: string | undefined;
      let clientId: string | undefined;
      let other = false;
      for (const e of entity) {
        if (e.entityType === 'user') user = e.entityName ?? DEFAULT;
        else if (e.entityType === 'client-id') clientId = e.entityName ?? DEFAULT;
        else other = true;
      }
      if (!other && (user !== undefined || clientId !== undefined)) index.set(entityKey(user, clientId), value);
    }
    this.index = index;
  }
}

interface Sensor {
  readonly rate: SampledRate;
  lastRecordMs: number;
}

/**
 * One quota type over sampled rates (Kafka's ClientQuotaManager): records a value for a client
 * and answers the throttle time that brings its rate back under the bound,
 * `(observed - bound) / bound * window` (ClientQuotaManager.throttleTime), capped at
 * `maxThrottleMs` where Kafka caps it (the request quota).
 */
export class ClientQuotaManager {
  private readonly sensors = new Map<string, Sensor>();
  private lastSweepMs = 0;

  constructor(
    readonly limits: QuotaLimits,
    private readonly window: QuotaWindow,
    private readonly maxThrottleMs = Number.POSITIVE_INFINITY,
  ) {}

  /** Records `value` and returns the throttle time in ms (0: within the quota or no quota). */
  recordAndGetThrottleTimeMs(client: QuotaClient, value: number, nowMs: number): number {
    const q = this.limits.resolve(client);
    if (q === null) return 0;
    const sensor = this.sensor(q.sensorKey, nowMs);
    sensor.rate.record(value, nowMs);
    const observed = sensor.rate.measure(nowMs);
    if (observed <= q.bound) return 0;
    const throttle = ((observed - q.bound) / q.bound) * sensor.rate.windowSize(nowMs);
    return Math.min(Math.round(throttle), this.maxThrottleMs);
  }

  /** Takes back a recorded value (Kafka's unrecordQuotaSensor). */
  unrecord(client: QuotaClient, value: number, nowMs: number): void {
    const q = this.limits.resolve(client);
    if (q !== null) this.sensor(q.sensorKey, nowMs).rate.record(-value, nowMs);
  }

  /**
   * The most that may be recorded at once without certain throttling (Kafka's
   * getMaxValueInQuotaWindow): bound * (samples - 1) * window seconds; Infinity without a quota.
   */
  maxValueInQuotaWindow(client: QuotaClient): number {
    const q = this.limits.resolve(client);
    if (q === null) return Number.POSITIVE_INFINITY;
    return q.bound * (this.window.samples - 1) * (this.window.windowMs / 1000);
  }

  private sensor(key: string, nowMs: number): Sensor {
    if (nowMs - this.lastSweepMs > 60_000) {
      this.lastSweepMs = nowMs;
      for (const [k, s] of this.sensors) if (nowMs - s.lastRecordMs > INACTIVE_SENSOR_MS) this.sensors.delete(k);
    }
    let s = this.sensors.get(key);
    if (!s) this.sensors.set(key, (s = { rate: new SampledRate(this.window), lastRecordMs: nowMs }));
    s.lastRecordMs = nowMs;
    return s;
  }
}
