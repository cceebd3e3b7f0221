/**
 * One TCP (or TLS) connection to one source broker, with pipelined requests: any number may be
 * in flight; Kafka answers in order, responses are matched by correlation id. A request timeout
 * closes the connection (as Kafka's NetworkClient does), failing every request on it.
 *
 * Concurrency contract: single event loop; `request` may be called at any time, including
 * before the previous response arrived.
 */
import net from 'node:net';
import tls from 'node:tls';
import { FrameDecoder } from '../protocol/frame-decoder.js';
import { Reader } from '../protocol/reader.js';
import { Writer } from '../protocol/writer.js';
import { API, CLIENT_VERSIONS, decodeApiVersionsResponse, encodeApiVersionsRequest, type ApiVersionRange } from './source-protocol.js';

export class SourceConnectionError extends Error {
  override readonly name = 'SourceConnectionError';
}

export interface SourceConnectionOptions {
  readonly host: string;
  readonly port: number;
  readonly clientId: string;
  /** request.timeout.ms (default 30000). */
  readonly requestTimeoutMs?: number;
  /** socket.connection.setup.timeout.ms (default 10000). */
  readonly connectTimeoutMs?: number;
  /** TLS options when security.protocol is SSL / SASL_SSL; null for PLAINTEXT. */
  readonly tls?: tls.ConnectionOptions | null;
}

interface Pending {
  readonly decode: (r: Reader) => unknown;
  readonly headerV0: boolean;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export class SourceConnection {
  private readonly pending = new Map<number, Pending>();
  private readonly frames = new FrameDecoder();
  private nextCorrelationId = 1;
  private closedError: Error | null = null;
  private readonly closeListeners: ((err: Error) => void)[] = [];
  /** Versions the broker supports, learned with ApiVersions at connect. */
  readonly versions = new Map<number, ApiVersionRange>();

  private constructor(
    private readonly socket: net.Socket,
    readonly opts: SourceConnectionOptions,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.fail(new SourceConnectionError(`${this.address}: ${err.message}`)));
    socket.on('close', () => this.fail(new SourceConnectionError(`${this.address}: connection closed`)));
  }

  get address(): string {
    return `${this.opts.host}:${this.opts.port}`;
  }

  get isClosed(): boolean {
    return this.closedError !== null;
  }

  static async connect(opts: SourceConnectionOptions): Promise<SourceConnection> {
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const timeoutMs = opts.connectTimeoutMs ?? 10_000;
      const s =
        opts.tls != null
          ? tls.connect({ ...opts.tls, host: opts.host, port: opts.port, servername: opts.tls.servername ?? opts.host })
          : net.connect({ host: opts.host, port: opts.port });
      const timer = setTimeout(() => {
        s.destroy();
        reject(new SourceConnectionError(`${opts.host}:${opts.port}: connect timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      const ready = opts.tls != null ? 'secureConnect' : 'connect';
      s.once(ready, () => {
        clearTimeout(timer);
        s.removeAllListeners('error');
        resolve(s);
      });
      s.once('error', (err) => {
        clearTimeout(timer);
        reject(new SourceConnectionError(`${opts.host}:${opts.port}: ${err.message}`));
      });
    });
    const conn = new SourceConnection(socket, opts);
    try {
      const res = await conn.request(API.API_VERSIONS, 3, encodeApiVersionsRequest, decodeApiVersionsResponse);
      if (res.errorCode !== 0) throw new SourceConnectionError(`${conn.address}: ApiVersions error ${res.errorCode}`);
      for (const k of res.apiKeys) conn.versions.set(k.apiKey, k);
    } catch (err) {
      conn.close();
      throw err;
    }
    return conn;
  }

  /**
   * Highest version both sides speak, or -1. `CLIENT_VERSIONS` says what this client can encode;
   * `extra` lets callers with their own codecs (admin RPCs) ask for other ranges.
   */
  pickVersion(apiKey: number, extra?: readonly [number, number]): number {
    const mine = extra ?? CLIENT_VERSIONS.get(apiKey);
    const theirs = this.versions.get(apiKey);
    if (mine === undefined || theirs === undefined) return -1;
    const v = Math.min(mine[1], theirs.maxVersion);
    return v >= Math.max(mine[0], theirs.minVersion) ? v : -1;
  }

  /** Sends one request with header v2 (all versions used here are flexible). */
  request<T>(apiKey: number, version: number, encode: (w: Writer) => void, decode: (r: Reader) => T): Promise<T> {
    if (this.closedError !== null) return Promise.reject(this.closedError);
    const correlationId = this.nextCorrelationId++ & 0x7fffffff;
    const w = new Writer();
    const size = w.reserve(4);
    w.int16(apiKey).int16(version).int32(correlationId).nullableString(this.opts.clientId).uvarint(0);
    encode(w);
    size.buf.writeInt32BE(w.length - 4, size.offset);
    return new Promise<T>((resolve, reject) => {
      const timeoutMs = this.opts.requestTimeoutMs ?? 30_000;
      const timer = setTimeout(() => {
        this.fail(new SourceConnectionError(`${this.address}: request ${apiKey} v${version} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(correlationId, {
        decode,
        headerV0: apiKey === API.API_VERSIONS,
        resolve: resolve as (v: unknown) => void,
        reject,
        timer,
      });
      this.socket.cork();
      for (const chunk of w.chunkList()) this.socket.write(chunk);
      this.socket.uncork();
    });
  }

  onClose(cb: (err: Error) => void): void {
    if (this.closedError !== null) cb(this.closedError);
    else this.closeListeners.push(cb);
  }

  close(): void {
    this.fail(new SourceConnectionError(`${this.address}: closed by the client`));
  }

  private onData(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.frames.push(chunk);
    } catch (err) {
      this.fail(new SourceConnectionError(`${this.address}: ${(err as Error).message}`));
      return;
    }
    for (const frame of frames) {
      const r = new Reader(frame);
      const correlationId = r.int32();
      const p = this.pending.get(correlationId);
      if (p === undefined) {
        this.fail(new SourceConnectionError(`${this.address}: response for unknown correlation id ${correlationId}`));
        return;
      }
      this.pending.delete(correlationId);
      clearTimeout(p.timer);
      try {
        if (!p.headerV0) r.taggedFields();
        p.resolve(p.decode(r));
      } catch (err) {
        p.reject(new SourceConnectionError(`${this.address}: bad response: ${(err as Error).message}`));
        this.fail(new SourceConnectionError(`${this.address}: undecodable response`));
        return;
      }
    }
  }

  private fail(err: Error): void {
    if (this.closedError !== null) return;
    this.closedError = err;
    this.socket.destroy();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
    for (const cb of this.closeListeners.splice(0)) cb(err);
  }
}
