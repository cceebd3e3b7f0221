/**
 * One client connection: frames in, responses out, strictly in request order.
 *
 * Concurrency contract: requests are decoded as they arrive and their handlers run concurrently
 * (a long-polling Fetch does not hold up a Metadata behind it), but responses leave in request
 * order (Kafka clients match responses by position and drop the connection otherwise). At most
 * `maxInFlight` requests are outstanding; beyond that, and while the socket's write buffer is
 * above its high-water mark, the socket is paused so a fast sender cannot grow our memory.
 *
 * On a SASL listener the connection is gated as Kafka's SaslServerAuthenticator gates it: until
 * the SaslAuthenticator says it is authenticated only ApiVersions, SaslHandshake and
 * SaslAuthenticate are read (anything else closes it), at most `sasl.server.max.receive.size`
 * bytes may be pending, and a failed SASL step closes the connection once its answer is written.
 * Every request carries the connection's principal and listener in its RequestContext.
 *
 * Produce requests start in order (./request-ordering.ts): each waits until the previous one on
 * the connection admits it; every other API's requests start as they are read.
 *
 * Request timing (./request-timing.ts): while something subscribes to `fjord:request-times`,
 * each request carries the timestamps of Kafka's RequestChannel.Request (received, handler
 * started, local work done, response ready, response dequeued, response sent). KIP-219 muting
 * of a throttled client is ./channel-mute.ts.
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { DecodeError } from '../protocol/decode-error.js';
import { Reader } from '../protocol/reader.js';
import { Writer } from '../protocol/writer.js';
import type { ApiHandler, RequestContext } from './api-handler.js';
import type { Logger } from '../common/logger.js';
import { FrameDecoder } from '../protocol/frame-decoder.js';
import type { ListenerEndpoint } from '../config/listeners.js';
import { saslHandlersFor } from './sasl-apis.js';
import type { SaslAuthenticator } from './sasl-authenticator.js';
import { ChannelMute } from './channel-mute.js';
import { requestOrdering } from './request-ordering.js';
import { publishTiming, startTiming, timingNow, type RequestTimes } from './request-timing.js';

export interface HeaderVersions {
  /** Request header version for (apiKey, version): 1 or 2. */
  request(apiKey: number, version: number): number;
  /** Response header version: 0 or 1 (ApiVersions always 0). */
  response(apiKey: number, version: number): number;
}

export interface ConnectionOptions {
  readonly id: string;
  readonly handlers: ReadonlyMap<number, ApiHandler>;
  readonly headers: HeaderVersions;
  readonly maxFrameBytes: number;
  readonly idleTimeoutMs: number;
  readonly maxInFlight: number;
  readonly log: Logger;
  /** Aborted when the node shuts down: delayed operations answer at once with what they have. */
  readonly shutdown: AbortSignal;
  /** The listener this connection came in on, with its advertised address. */
  endpoint(): ListenerEndpoint;
  /** The principal TLS established (a client certificate's, or ANONYMOUS); ANONYMOUS on plaintext. */
  readonly transportPrincipal: string;
  /** On a SASL listener: nothing but ApiVersions and the SASL requests until it authenticates. */
  readonly sasl: SaslAuthenticator | null;
  /** Closed if not authenticated by then (SASL listeners); 0: no limit. */
  readonly authenticationTimeoutMs: number;
  /**
   * The request quota's throttle time for a request that kept the event loop busy `nanos`
   * (decoding and the handler's synchronous part); absent: no request quota.
   */
  requestThrottleMs?(client: { readonly principal: string; readonly clientId: string | null }, apiKey: number, nanos: number): number;
  /** The reply to an ApiVersions request of an unsupported version (v0 body, error 35). */
  unsupportedApiVersionsBody(): Buffer;
  onClose(conn: Connection): void;
}

interface Slot {
  readonly correlationId: number;
  readonly responseHeaderVersion: number;
  done: boolean;
  /** null: send nothing (acks=0). */
  chunks: Buffer[] | null;
  /** A bare SASL token (after a v0 SaslHandshake): no response header. */
  raw?: boolean;
  /** Close the connection once this response is written (a failed SASL step). */
  closeAfter?: boolean;
  /** Only while `fjord:request-times` has subscribers. */
  times?: RequestTimes;
  /** The handler's release of the response's buffers, once the socket has taken them all. */
  release?: () => void;
}

interface Admission {
  admitted: boolean;
  /** Resolves when the request admits the next of its API. */
  readonly opened: Promise<void>;
}

const API_VERSIONS = 18;
const SASL_HANDSHAKE = 17;
const SASL_AUTHENTICATE = 36;

export class Connection {
  private readonly frames: FrameDecoder;
  private readonly queue: Slot[] = [];
  private readonly abort = new AbortController();
  private readonly requestSignal: AbortSignal;
  private closed = false;
  private paused = false;
  private readonly clientAddress: string;
  private readonly saslHandlers: ReadonlyMap<number, ApiHandler> | null;
  private authTimer: NodeJS.Timeout | undefined;
  /** KIP-219 muting: no frame is read while muted; frames already cut wait in it. */
  private readonly mute: ChannelMute;
  /** Per API started in order (./request-ordering.ts): its last request, until it admits the next. */
  private readonly admissions = new Map<number, Admission>();

  constructor(
    private readonly socket: Socket,
    private readonly opts: ConnectionOptions,
  ) {
    this.frames = new FrameDecoder(opts.maxFrameBytes);
    this.mute = new ChannelMute(
      () => socket.pause(),
      () => this.unmute(),
    );
    this.requestSignal = AbortSignal.any([this.abort.signal, opts.shutdown]);
    this.clientAddress = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`;
    socket.setNoDelay(true);
    this.saslHandlers = opts.sasl ? saslHandlersFor(opts.sasl) : null;
    if (opts.sasl && opts.authenticationTimeoutMs > 0) {
      this.authTimer = setTimeout(() => {
        if (!opts.sasl!.authenticated) this.close('authentication timeout');
      }, opts.authenticationTimeoutMs);
      this.authTimer.unref();
    }
    if (opts.idleTimeoutMs > 0) {
      socket.setTimeout(opts.idleTimeoutMs, () => this.close('idle timeout'));
    }
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => this.maybeResume());
    socket.on('error', (err) => opts.log.debug('socket error', { conn: opts.id, err: err.message }));
    socket.on('close', () => this.close('peer closed'));
  }

  get id(): string {
    return this.opts.id;
  }

  /** Number of requests received but not yet answered. */
  get inFlight(): number {
    return this.queue.length;
  }

  /** Resolves when every request received so far has been answered (or the connection closed). */
  async drained(): Promise<void> {
    while (!this.closed && this.queue.length > 0) {
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.authTimer);
    this.mute.close();
    this.abort.abort();
    this.opts.log.debug('connection closed', { conn: this.opts.id, reason });
    this.socket.destroy();
    this.opts.onClose(this);
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    let frames: Buffer[];
    try {
      frames = this.frames.push(chunk);
    } catch (err) {
      this.opts.log.warn('bad frame, closing connection', { conn: this.opts.id, client: this.clientAddress, err: (err as Error).message });
      this.close('bad frame');
      return;
    }
    const receivedAt = frames.length > 0 ? timingNow() : -1;
    const sasl = this.opts.sasl;
    if (sasl && !sasl.authenticated && this.frames.bufferedBytes > sasl.maxReceiveSize) {
      // Kafka's sasl.server.max.receive.size: an unauthenticated client cannot make us buffer more.
      this.opts.log.warn('oversized request before authentication, closing connection', { conn: this.opts.id, client: this.clientAddress });
      this.close('oversized unauthenticated request');
      return;
    }
    for (const [i, frame] of frames.entries()) {
      if (this.closed) return;
      if (this.mute.muted) {
        // Pipelined requests behind a throttled one wait with it (Kafka reads none while muted).
        this.mute.hold(frames.slice(i));
        break;
      }
      this.onFrame(frame, receivedAt);
    }
    if (this.queue.length >= this.opts.maxInFlight && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
  }

  /** Mutes the channel for `ms` (the longest throttle asked for wins), as Kafka's ThrottledChannel does. */
  private throttle(ms: number): void {
    if (!this.closed) this.mute.throttle(ms);
  }

  /** The mute ended: the held frames are read, until one mutes the channel again. */
  private unmute(): void {
    if (this.closed) return;
    const held = this.mute.takeHeld();
    for (const [i, frame] of held.entries()) {
      if (this.closed) return;
      if (this.mute.muted) {
        this.mute.hold(held.slice(i));
        return;
      }
      // A held request's queue time starts when the channel is read again, as Kafka's does.
      this.onFrame(frame, timingNow());
    }
    if (this.queue.length >= this.opts.maxInFlight) this.paused = true;
    if (!this.paused) this.socket.resume();
  }

  /** `receivedAt`: when the read that completed the frame arrived, or -1 when nobody times requests. */
  private onFrame(frame: Buffer, receivedAt: number): void {
    const sasl = this.opts.sasl;
    if (sasl?.expectsRawToken) {
      this.onRawToken(sasl, frame);
      return;
    }
    const started = process.hrtime.bigint();
    const r = new Reader(frame);
    let apiKey: number;
    let apiVersion: number;
    let correlationId: number;
    try {
      apiKey = r.int16();
      apiVersion = r.int16();
      correlationId = r.int32();
    } catch {
      this.close('short request header');
      return;
    }
    if (sasl) {
      if (!sasl.allows(apiKey)) {
        this.opts.log.info('request before SASL authentication, closing connection', { conn: this.opts.id, client: this.clientAddress, apiKey });
        this.close('unauthenticated request');
        return;
      }
      if (sasl.sessionExpired() && apiKey !== SASL_HANDSHAKE) {
        // KIP-368: a session past connections.max.reauth.ms that has not re-authenticated.
        this.opts.log.info('SASL session expired, closing connection', { conn: this.opts.id, client: this.clientAddress });
        this.close('session expired');
        return;
      }
    }
    const handler = this.saslHandlers?.get(apiKey) ?? this.opts.handlers.get(apiKey);
    if (!handler || apiVersion < handler.minVersion || apiVersion > handler.maxVersion) {
      if (apiKey === API_VERSIONS) {
        // KIP-511: answer a too-new ApiVersions with a v0 body so the client can retry lower.
        const slot: Slot = { correlationId, responseHeaderVersion: 0, done: true, chunks: [this.opts.unsupportedApiVersionsBody()] };
        this.queue.push(slot);
        this.flush();
        return;
      }
      this.opts.log.info('unsupported request, closing connection', { conn: this.opts.id, apiKey, apiVersion });
      this.close('unsupported api');
      return;
    }
    let req: unknown;
    let clientId: string | null;
    try {
      const headerVersion = this.opts.headers.request(apiKey, apiVersion);
      clientId = r.nullableString();
      if (headerVersion >= 2) r.taggedFields();
      req = handler.decode(r, apiVersion);
    } catch (err) {
      this.opts.log.warn('undecodable request, closing connection', {
        conn: this.opts.id,
        apiKey,
        apiVersion,
        err: err instanceof DecodeError ? err.message : String(err),
      });
      this.close('decode error');
      return;
    }
    const slot: Slot = { correlationId, responseHeaderVersion: this.opts.headers.response(apiKey, apiVersion), done: false, chunks: null };
    this.queue.push(slot);
    const times = startTiming(apiKey, apiVersion, req, receivedAt);
    if (times !== undefined) slot.times = times;
    const principal = sasl?.principal ?? this.opts.transportPrincipal;
    const admission = requestOrdering(apiKey) === 'in-order-until-admitted' ? this.admit(apiKey) : null;
    const ctx: RequestContext = {
      apiKey,
      apiVersion,
      correlationId,
      clientId,
      connectionId: this.opts.id,
      principal,
      clientAddress: this.clientAddress,
      listener: this.opts.endpoint(),
      signal: this.requestSignal,
      waitingRemotely:
        times === undefined
          ? undefined
          : () => {
              if (times.remoteAt < 0) times.remoteAt = performance.now();
            },
      requestBytes: frame.length,
      throttle: (ms) => this.throttle(ms),
      ...(admission !== null ? { admitNext: admission.admitNext } : {}),
    };
    const run = (decodeNanos: number): void => this.run(slot, handler, ctx, req, decodeNanos, admission?.admitNext);
    const decodeNanos = Number(process.hrtime.bigint() - started);
    if (admission?.after === undefined) run(decodeNanos);
    else void admission.after.then(() => run(decodeNanos));
  }

  /**
   * The admission of a request of an API started in order: `after` (undefined when the
   * previous request of the API has admitted this one already, the common case, which runs at
   * once) and the `admitNext` that lets the following one run.
   */
  private admit(apiKey: number): { readonly after: Promise<void> | undefined; readonly admitNext: () => void } {
    const previous = this.admissions.get(apiKey);
    let open = (): void => undefined;
    const mine: Admission = { admitted: false, opened: new Promise<void>((resolve) => (open = resolve)) };
    this.admissions.set(apiKey, mine);
    const admitNext = (): void => {
      if (mine.admitted) return;
      mine.admitted = true;
      open();
      if (this.admissions.get(apiKey) === mine) this.admissions.delete(apiKey);
    };
    return { after: previous === undefined || previous.admitted ? undefined : previous.opened, admitNext };
  }

  /** Runs the request's handler; `decodeNanos`: the loop time its frame took before it. */
  private run(slot: Slot, handler: ApiHandler, ctx: RequestContext, req: unknown, decodeNanos: number, admitNext: (() => void) | undefined): void {
    if (this.closed) return;
    const { apiKey, apiVersion, principal, clientId } = ctx;
    const started = process.hrtime.bigint();
    const times = slot.times;
    let result: unknown;
    if (times !== undefined) times.handlerStartAt = performance.now();
    try {
      result = handler.handle(ctx, req);
    } catch (err) {
      admitNext?.();
      this.fail(apiKey, err);
      return;
    }
    const busyNanos = decodeNanos + Number(process.hrtime.bigint() - started);
    const requestThrottle = (): number => this.opts.requestThrottleMs?.({ principal, clientId }, apiKey, busyNanos) ?? 0;
    if (result instanceof Promise) {
      result.then(
        (res) => {
          admitNext?.();
          this.complete(slot, handler, res, apiVersion, apiKey, requestThrottle());
        },
        (err) => {
          admitNext?.();
          this.fail(apiKey, err);
        },
      );
    } else {
      admitNext?.();
      this.complete(slot, handler, result, apiVersion, apiKey, requestThrottle());
    }
  }

  private complete(slot: Slot, handler: ApiHandler, res: unknown, version: number, apiKey: number, requestThrottleMs: number): void {
    if (this.closed) return;
    if (requestThrottleMs > 0) {
      // Kafka answers with the larger of the bandwidth and request throttles and mutes for it.
      this.throttle(requestThrottleMs);
      if (res !== null && typeof res === 'object' && 'throttleTimeMs' in res) {
        const r = res as { throttleTimeMs?: number };
        r.throttleTimeMs = Math.max(r.throttleTimeMs ?? 0, requestThrottleMs);
      }
    }
    if (res !== null && res !== undefined) {
      const w = new Writer();
      try {
        handler.encode(w, res, version);
      } catch (err) {
        this.fail(apiKey, err);
        return;
      }
      slot.chunks = w.chunkList();
      if (handler.release !== undefined) slot.release = () => handler.release!(res);
    }
    if (slot.times !== undefined) slot.times.completeAt = performance.now();
    slot.done = true;
    if (this.opts.sasl?.failed) slot.closeAfter = true;
    this.flush();
  }

  /** A bare SASL token after a v0 SaslHandshake: answered bare, or the connection closed. */
  private onRawToken(sasl: SaslAuthenticator, token: Buffer): void {
    const slot: Slot = { correlationId: 0, responseHeaderVersion: 0, done: false, chunks: null, raw: true };
    this.queue.push(slot);
    sasl.rawToken(Buffer.from(token)).then(
      (reply) => {
        if (this.closed) return;
        if (reply === null) {
          this.close('SASL authentication failed');
          return;
        }
        slot.chunks = [reply];
        slot.done = true;
        this.flush();
      },
      (err: unknown) => this.fail(SASL_AUTHENTICATE, err),
    );
  }

  private fail(apiKey: number, err: unknown): void {
    this.opts.log.warn('request failed, closing connection', { conn: this.opts.id, apiKey, err: err instanceof Error ? err : String(err) });
    this.close('handler error');
  }

  /** Writes every finished response at the head of the queue, each as one corked burst. */
  private flush(): void {
    if (this.closed) return;
    let wrote = false;
    while (this.queue.length > 0 && this.queue[0]!.done) {
      const slot = this.queue.shift()!;
      const times = slot.times;
      if (times !== undefined) times.dequeuedAt = performance.now();
      if (slot.chunks === null) {
        // acks=0: nothing to send, the request ends here (Kafka's NoOpResponse).
        if (times !== undefined) publishTiming(times, times.dequeuedAt);
        continue;
      }
      let bodyLength = 0;
      for (const c of slot.chunks) bodyLength += c.length;
      const headerLength = slot.raw ? 0 : slot.responseHeaderVersion >= 1 ? 5 : 4;
      const head = Buffer.allocUnsafe(4 + headerLength);
      head.writeInt32BE(headerLength + bodyLength, 0);
      if (headerLength > 0) head.writeInt32BE(slot.correlationId, 4);
      if (headerLength === 5) head[8] = 0;
      if (!wrote) this.socket.cork();
      wrote = true;
      // The last write's callback runs once the socket has taken the whole response.
      const release = slot.release;
      const sent =
        times === undefined && release === undefined
          ? undefined
          : (err?: Error | null): void => {
              if (err) return;
              release?.();
              if (times !== undefined) publishTiming(times);
            };
      const last = slot.chunks.length - 1;
      this.socket.write(head, last < 0 ? sent : undefined);
      for (let i = 0; i <= last; i++) this.socket.write(slot.chunks[i]!, i === last ? sent : undefined);
      if (slot.closeAfter) {
        this.socket.uncork();
        this.closeAfterWrite('SASL authentication failed');
        return;
      }
    }
    if (wrote) this.socket.uncork();
    if (this.socket.writableNeedDrain && !this.paused) {
      this.paused = true;
      this.socket.pause();
      return;
    }
    this.maybeResume();
  }

  /** Lets the last response reach the client before the socket goes. */
  private closeAfterWrite(reason: string): void {
    this.socket.end(() => this.close(reason));
    setTimeout(() => this.close(reason), 1000).unref();
  }

  private maybeResume(): void {
    if (!this.paused || this.closed) return;
    if (this.queue.length < this.opts.maxInFlight && !this.socket.writableNeedDrain) {
      this.paused = false;
      if (!this.mute.muted) this.socket.resume();
    }
  }
}
