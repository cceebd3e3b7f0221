import type { Reader } from '../protocol/reader.js';
import type { Writer } from '../protocol/writer.js';
import type { ListenerEndpoint } from '../config/listeners.js';

/** What a handler knows about the request it serves. */
export interface RequestContext {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
  /** Unique per connection, for fetch sessions and diagnostics. */
  readonly connectionId: string;
  /** `User:ANONYMOUS` until SASL exists. */
  readonly principal: string;
  readonly clientAddress: string;
  /** The listener the request came in on; Metadata answers with its advertised address, as Kafka does. */
  readonly listener?: ListenerEndpoint;
  /** Aborted when the connection closes: long polls stop waiting. */
  readonly signal: AbortSignal;
  /**
   * Called by a handler when its local work is done and it starts waiting on something else (a
   * long-poll Fetch waiting for data, an acks=all Produce waiting for durability): Kafka's
   * apiLocalCompleteTimeNanos, where a request moves into purgatory. Only the first call counts;
   * absent when nobody measures request times.
   */
  readonly waitingRemotely?: (() => void) | undefined;
  /** The size of the request frame (what Kafka's produce quota counts); absent for in-process calls. */
  readonly requestBytes?: number;
  /**
   * Stops reading the connection for `ms` once this request is answered (KIP-219: a client over
   * its quota gets its response at once and is then muted); 0 or less does nothing. Absent for
   * in-process calls, which have no connection to mute.
   */
  throttle?(ms: number): void;
  /**
   * For an API the connection starts in order (./request-ordering.ts): lets the next request of
   * the same API on this connection start (a Produce once every append of it is queued on its
   * log). The connection admits the next by itself once this request is answered. Absent for
   * other APIs and in-process calls.
   */
  readonly admitNext?: (() => void) | undefined;
}

/**
 * One API key served by the node. The connection decodes the body with `decode`, calls `handle`,
 * and encodes what it returns with `encode` in the request's version. `handle` returning null
 * sends no response (Produce with acks=0). A thrown error is mapped to a connection close by the
 * connection, so handlers return per-partition error codes instead of throwing.
 */
export interface ApiHandler<Req = unknown, Res = unknown> {
  readonly apiKey: number;
  readonly minVersion: number;
  readonly maxVersion: number;
  decode(r: Reader, version: number): Req;
  encode(w: Writer, res: Res, version: number): void;
  handle(ctx: RequestContext, req: Req): Promise<Res | null> | Res | null;
  /**
   * Called once the socket has taken every byte of the encoded `res`, so buffers the response
   * referenced (the Writer keeps large byte fields by reference) may be reused. Not called when
   * the write fails or the connection closes first: those buffers are left to the collector.
   */
  release?(res: Res): void;
}
