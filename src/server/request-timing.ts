/**
 * Request timing: while something subscribes to `fjord:request-times` (the metrics room does),
 * each request carries the timestamps of Kafka's RequestChannel.Request, published once the
 * response has been handed to the socket; with no subscriber nothing is kept.
 */
import { channel } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';

/** The message shape is documented in src/metrics/channels.ts (RequestTimesMessage). */
const requestTimes = channel('fjord:request-times');

/**
 * Kafka's RequestChannel.Request timestamps, in performance.now() milliseconds: startTimeNanos
 * (the frame is complete), requestDequeueTimeNanos (the handler starts), apiLocalCompleteTimeNanos
 * (the handler says it waits remotely; -1 when it never does), responseCompleteTimeNanos (the
 * response is encoded), responseDequeueTimeNanos (its turn to be written: responses leave in
 * request order) and the end (the socket took the last byte).
 */
export interface RequestTimes {
  readonly apiKey: number;
  readonly apiVersion: number;
  /** The decoded request, so a Fetch can also be counted as FetchConsumer or FetchFollower. */
  readonly request: unknown;
  readonly receivedAt: number;
  handlerStartAt: number;
  remoteAt: number;
  completeAt: number;
  dequeuedAt: number;
  sentAt: number;
}

/** Now, when someone times requests; -1 otherwise (nothing is kept then). */
export function timingNow(): number {
  return requestTimes.hasSubscribers ? performance.now() : -1;
}

/** A request's times from `receivedAt` (from timingNow()); undefined when nobody times requests. */
export function startTiming(apiKey: number, apiVersion: number, request: unknown, receivedAt: number): RequestTimes | undefined {
  return receivedAt < 0 ? undefined : { apiKey, apiVersion, request, receivedAt, handlerStartAt: 0, remoteAt: -1, completeAt: 0, dequeuedAt: 0, sentAt: 0 };
}

/** The socket took the response's last byte (or there was none to send). */
export function publishTiming(times: RequestTimes, sentAt = performance.now()): void {
  times.sentAt = sentAt;
  requestTimes.publish(times);
}
