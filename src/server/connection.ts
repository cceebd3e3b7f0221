/**
 * One client connection: frames in, responses out, strictly in request order.
 *
 * Concurrency contract: requests are decoded as they arrive and their handlers run concurrently
 * (a long-polling Fetch does not hold up a Metadata behind it), but responses leave in request
 * order (Kafka clients match responses by position and drop the connection otherwise). At most
 * `maxInFlight` requests are outstanding; beyond that, and while the socket's write buffer is
 * above its high-water mark, the socket is paused so a fast sender cannot grow our memory.
 */
import type { Socket } from 'node:net';
import { DecodeError } from '../protocol/decode-error.js';
import { Reader } from '../protocol/reader.js';
import { Writer } from '../protocol/writer.js';
import type { ApiHandler, RequestContext } from './api-handler.js';
import type { Logger } from '../common/logger.js';
import { FrameDecoder } from '../protocol/frame-decoder.js';

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
}

const API_VERSIONS = 18;

export class Connection {
  private readonly frames: FrameDecoder;
  private readonly queue: Slot[] = [];
  private readonly abort = new AbortController();
  private readonly requestSignal: AbortSignal;
  private closed = false;
  private paused = false;
  private readonly clientAddress: string;

  constructor(
    private readonly socket: Socket,
    private readonly opts: ConnectionOptions,
  ) {
    this.frames = new FrameDecoder(opts.maxFrameBytes);
    this.requestSignal = AbortSignal.any([this.abort.signal, opts.shutdown]);
    this.clientAddress = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`;
    socket.setNoDelay(true);
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
    for (const frame of frames) {
      if (this.closed) return;
      this.onFrame(frame);
    }
    if (this.queue.length >= this.opts.maxInFlight && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
  }

  private onFrame(frame: Buffer): void {
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
    const handler = this.opts.handlers.get(apiKey);
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
    const ctx: RequestContext = {
      apiKey,
      apiVersion,
      correlationId,
      clientId,
      connectionId: this.opts.id,
      principal: 'User:ANONYMOUS',
      clientAddress: this.clientAddress,
      signal: this.requestSignal,
    };
    let result: unknown;
    try {
      result = handler.handle(ctx, req);
    } catch (err) {
      this.fail(apiKey, err);
      return;
    }
    if (result instanceof Promise) {
      result.then(
        (res) => this.complete(slot, handler, res, apiVersion, apiKey),
        (err) => this.fail(apiKey, err),
      );
    } else {
      this.complete(slot, handler, result, apiVersion, apiKey);
    }
  }

  private complete(slot: Slot, handler: ApiHandler, res: unknown, version: number, apiKey: number): void {
    if (this.closed) return;
    if (res !== null && res !== undefined) {
      const w = new Writer();
      try {
        handler.encode(w, res, version);
      } catch (err) {
        this.fail(apiKey, err);
        return;
      }
      slot.chunks = w.chunkList();
    }
    slot.done = true;
    this.flush();
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
      if (slot.chunks === null) continue;
      let bodyLength = 0;
      for (const c of slot.chunks) bodyLength += c.length;
      const headerLength = slot.responseHeaderVersion >= 1 ? 5 : 4;
      const head = Buffer.allocUnsafe(4 + headerLength);
      head.writeInt32BE(headerLength + bodyLength, 0);
      head.writeInt32BE(slot.correlationId, 4);
      if (headerLength === 5) head[8] = 0;
      if (!wrote) this.socket.cork();
      wrote = true;
      this.socket.write(head);
      for (const c of slot.chunks) this.socket.write(c);
    }
    if (wrote) this.socket.uncork();
    if (this.socket.writableNeedDrain && !this.paused) {
      this.paused = true;
      this.socket.pause();
      return;
    }
    this.maybeResume();
  }

  private maybeResume(): void {
    if (!this.paused || this.closed) return;
    if (this.queue.length < this.opts.maxInFlight && !this.socket.writableNeedDrain) {
      this.paused = false;
      this.socket.resume();
    }
  }
}
