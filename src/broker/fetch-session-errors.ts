/**
 * Counts the fetch-session errors the node answers (FETCH_SESSION_ID_NOT_FOUND,
 * INVALID_FETCH_SESSION_EPOCH, FETCH_SESSION_TOPIC_ID_ERROR), per error code, for the metrics to
 * export, and logs them: each at debug, as Kafka's FetchManager does, plus at most one warning per
 * interval with the count since the last one. A client that keeps resending a request its session
 * cannot serve shows up in the node's log as a warning every interval instead of not at all.
 */
import type { Logger } from '../common/logger.js';
import { ERRORS } from '../protocol/generated/errors.js';

interface SessionErrorDetails {
  readonly sessionId: number;
  readonly epoch: number;
  /** The epoch the session expected, when it exists. */
  readonly expectedEpoch?: number;
  readonly clientId: string | null;
  readonly client: string;
}

export class FetchSessionErrors {
  private readonly byCode = new Map<number, number>();
  private lastWarnMs = Number.NEGATIVE_INFINITY;
  private sinceWarn = 0;

  constructor(
    private readonly log: Logger,
    private readonly warnIntervalMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Errors answered since start with this code. */
  count(code: number): number {
    return this.byCode.get(code) ?? 0;
  }

  /** Errors answered since start, by Kafka's error name. */
  snapshot(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [code, n] of this.byCode) out[ERRORS.get(code)?.name ?? String(code)] = n;
    return out;
  }

  record(errorCode: number, d: SessionErrorDetails): void {
    this.byCode.set(errorCode, this.count(errorCode) + 1);
    const error = ERRORS.get(errorCode)?.name ?? String(errorCode);
    this.log.debug('fetch session error', { error, ...d });
    this.sinceWarn++;
    const t = this.now();
    if (t - this.lastWarnMs < this.warnIntervalMs) return;
    this.log.warn('fetch session errors answered', { count: this.sinceWarn, last: error, ...d, totals: this.snapshot() });
    this.lastWarnMs = t;
    this.sinceWarn = 0;
  }
}
