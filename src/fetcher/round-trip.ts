/**
 * The round trip a fetch loop measures to its source broker, from its own Fetches: the time from
 * sending a Fetch to its answer, less the throttle time the broker reports, for answers that
 * carried records. The source answers those without a long poll (it had data for the fetch at
 * once, or it waited only until data came), so the time is the link's round trip plus the
 * source's work for the request and the transfer of the answer.
 *
 * The estimate is the smallest of the last `window` samples, as TCP's minimum-RTT filters take
 * it: a long-poll wait that ended with new data, a large answer's transfer or a stall of the
 * event loop only ever add to a sample, so the minimum over a few recent ones is the link's own
 * delay, and a link that became slower shows once the faster samples have left the window.
 *
 * `./source-broker-loop.ts` turns the overlap of fetching and appending on by itself when the
 * estimate reaches `PIPELINE_AUTO_MIN_RTT_MS`, and off again below half of it.
 */

/** Samples kept: enough that a few slow answers do not hide the link's delay, few enough to follow a change. */
const WINDOW = 8;
/** Samples needed before the estimate counts. */
const MIN_SAMPLES = 3;

export class RoundTripEstimate {
  private readonly samples: number[] = [];
  private next = 0;

  /** Adds one answer's time in ms (negative or non-finite times are ignored). */
  add(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    if (this.samples.length < WINDOW) this.samples.push(ms);
    else this.samples[this.next] = ms;
    this.next = (this.next + 1) % WINDOW;
  }

  /** The smallest recent sample in ms; -1 until enough answers were seen. */
  get ms(): number {
    if (this.samples.length < MIN_SAMPLES) return -1;
    return Math.min(...this.samples);
  }

  /** Forgets every sample (a new connection may take another path). */
  reset(): void {
    this.samples.length = 0;
    this.next = 0;
  }
}
