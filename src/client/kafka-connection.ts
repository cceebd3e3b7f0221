/**
 * One connection to one Kafka broker, as Kafka's `NetworkClient` keeps one per node: frames,
 * correlation ids, request and response headers chosen per API version from the generated API
 * table, ApiVersions negotiation on connect, and a request timeout.
 *
 * Requests are pipelined: any number may be in flight; a broker answers in order, and responses
 * are matched by correlation id. A request timeout (request.timeout.ms) closes the connection, as
 * Kafka's client does, failing every request on it with REQUEST_TIMED_OUT; a lost or undecodable
 * stream fails them with NETWORK_EXCEPTION. Every failure is a `KafkaError`.
 *
 * Responses are decoded from the received frame in place: byte fields (a Fetch response's
 * `records`) are subarrays of the frame, never copies. Over TCP the socket reads straight into
 * the frame (./frame-reader.ts), so a large Fetch response is not copied in user space at all;
 * a transport that cannot (TLS) delivers chunks, which `FrameDecoder` assembles.
 *
 * Concurrency contract: single event loop; `request` may be called at any time, including before
 * the previous response arrived.
 */
import type net from 'node:net';
import { FrameDecoder } from '../protocol/frame-decoder.js';
import { FrameReader } from './frame-reader.js';
import { API_TABLE, ApiKey } from '../protocol/generated/api-table.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { encodeApiVersionsRequest } from '../protocol/generated/messages/api-versions-request.js';
import { decodeApiVersionsResponse } from '../protocol/generated/messages/api-versions-response.js';
import { encodeRequestHeader } from '../protocol/generated/messages/request-header.js';
import { decodeResponseHeader } from '../protocol/generated/messages/response-header.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { Reader } from '../protocol/reader.js';
import { Writer } from '../protocol/writer.js';
import { plaintextSockets, type SocketFactory } from './socket-factory.js';

/** ApiVersions v3: the first flexible version, carrying the client software name (KIP-511). */
const API_VERSIONS_VERSION = 3;
const CLIENT_SOFTWARE_NAME = 'fjord';
const CLIENT_SOFTWARE_VERSION = '0.1.0';

export interface KafkaConnectionOptions {
  readonly host: string;
  readonly port: number;
  readonly clientId: string;
  /** request.timeout.ms (default 30000). */
  readonly requestTimeoutMs?: number;
  /** socket.connection.setup.timeout.ms (default 10000). */
  readonly connectTimeoutMs?: number;
  /** The transport (PLAINTEXT when absent); see ./socket-factory.ts. */
  readonly socketFactory?: SocketFactory;
  /**
   * Runs once versions are known and before the connection is handed out: where SASL
   * (SaslHandshake, SaslAuthenticate) belongs, as Kafka's SaslClientAuthenticator runs after
   * ApiVersions. A rejection fails the connect with it.
   */
  readonly authenticate?: (conn: KafkaConnection) => Promise<void>;
}

interface ApiVersionRange {
  readonly minVersion: number;
  readonly maxVersion: number;
}

/** A response whose frame the caller holds until it calls `release` (see `requestHoldingFrame`). */
export interface HeldResponse<T> {
  readonly value: T;
  /** The caller, and all it gave parts of the response to, are done with its bytes. */
  release(): void;
}

interface Pending {
  readonly decode: (r: Reader) => unknown;
  /** Resolve with a HeldResponse rather than the decoded value. */
  readonly holdFrame: boolean;
  readonly responseHeaderVersion: number;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export class KafkaConnection {
  private readonly pending = new Map<number, Pending>();
  private readonly frames = new FrameDecoder();
  /** Frames read in place (plain TCP); the socket's reads are handed to `onRead` once constructed. */
  private readonly reader: FrameReader;
  private nextCorrelationId = 1;
  private closedError: KafkaError | null = null;
  /** Set while a re-authentication runs: other requests wait for it. */
  private hold: Promise<void> | null = null;
  private readonly closeListeners: ((err: KafkaError) => void)[] = [];
  /** Versions the broker supports, learned with ApiVersions at connect. */
  readonly versions = new Map<number, ApiVersionRange>();

  private constructor(
    private readonly socket: net.Socket,
    readonly opts: KafkaConnectionOptions,
    reader: FrameReader,
    early: readonly Buffer[],
  ) {
    socket.setNoDelay(true);
    this.reader = reader;
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    if (early.length > 0) this.onFrames(early);
    socket.on('error', (err) => this.fail(new KafkaError(ErrorCode.NETWORK_EXCEPTION, `${this.address}: ${err.message}`)));
    socket.on('close', () => this.fail(new KafkaError(ErrorCode.NETWORK_EXCEPTION, `${this.address}: connection closed`)));
  }

  get address(): string {
    return `${this.opts.host}:${this.opts.port}`;
  }

  get isClosed(): boolean {
    return this.closedError !== null;
  }

  /** Opens the stream and negotiates versions; the connection is usable once this resolves. */
  static async connect(opts: KafkaConnectionOptions): Promise<KafkaConnection> {
    const sockets = opts.socketFactory ?? plaintextSockets;
    const reader = new FrameReader();
    // Reads the socket makes before the connection exists (none are expected: the broker speaks
    // only when asked) are kept and handled once it does.
    let target: KafkaConnection | null = null;
    const early: Buffer[] = [];
    let earlyError: Error | null = null;
    const direct = {
      buffer: (): Uint8Array => reader.buffer(),
      received: (n: number): void => {
        if (target !== null) target.onRead(n);
        else if (earlyError === null) {
          try {
            early.push(...reader.received(n));
          } catch (err) {
            earlyError = err as Error;
          }
        }
      },
    };
    const socket = await sockets({ host: opts.host, port: opts.port }, opts.connectTimeoutMs ?? 10_000, direct);
    const conn = new KafkaConnection(socket, opts, reader, early);
    target = conn;
    if (earlyError !== null) conn.fail(new KafkaError(ErrorCode.NETWORK_EXCEPTION, `${conn.address}: ${(earlyError as Error).message}`));
    try {
      const res = await conn.request(
        ApiKey.ApiVersions,
        API_VERSIONS_VERSION,
        (w) => encodeApiVersionsRequest(w, { clientSoftwareName: CLIENT_SOFTWARE_NAME, clientSoftwareVersion: CLIENT_SOFTWARE_VERSION }, API_VERSIONS_VERSION),
        (r) => decodeApiVersionsResponse(r, API_VERSIONS_VERSION),
      );
      if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, `${conn.address}: ApiVersions failed`);
      for (const k of res.apiKeys) conn.versions.set(k.apiKey, { minVersion: k.minVersion, maxVersion: k.maxVersion });
      await opts.authenticate?.(conn);
    } catch (err) {
      conn.close();
      throw err;
    }
    return conn;
  }

  /** The highest version in `range` the broker speaks too, or -1. */
  pickVersion(apiKey: number, range: readonly [number, number]): number {
    const theirs = this.versions.get(apiKey);
    if (theirs === undefined) return -1;
    const v = Math.min(range[1], theirs.maxVersion);
    return v >= Math.max(range[0], theirs.minVersion) ? v : -1;
  }

  /**
   * Sends one request: `encode` writes the body, `decode` reads the response body (the header is
   * written and read here, at the versions the API table gives for `version`).
   */
  request<T>(apiKey: number, version: number, encode: (w: Writer) => void, decode: (r: Reader) => T, duringHold = false): Promise<T> {
    return this.send(apiKey, version, encode, decode, duringHold, false) as Promise<T>;
  }

  /**
   * Like `request`, for a response whose byte fields the caller keeps using after it resolves (a
   * Fetch answer's records, until they are appended): once done with them it calls `release`, and
   * the frame's buffer may be read into again for a later response (./frame-reader.ts).
   */
  requestHoldingFrame<T>(apiKey: number, version: number, encode: (w: Writer) => void, decode: (r: Reader) => T): Promise<HeldResponse<T>> {
    return this.send(apiKey, version, encode, decode, false, true) as Promise<HeldResponse<T>>;
  }

  private send(apiKey: number, version: number, encode: (w: Writer) => void, decode: (r: Reader) => unknown, duringHold: boolean, holdFrame: boolean): Promise<unknown> {
    if (this.closedError !== null) return Promise.reject(this.closedError);
    if (this.hold !== null && !duringHold) return this.hold.then(() => this.send(apiKey, version, encode, decode, false, holdFrame));
    const info = API_TABLE[apiKey];
    if (info === undefined) return Promise.reject(new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `API key ${apiKey} has no schema`));
    const correlationId = this.nextCorrelationId;
    this.nextCorrelationId = (this.nextCorrelationId + 1) & 0x7fffffff;
    const w = new Writer();
    const size = w.reserve(4);
    encodeRequestHeader(w, { requestApiKey: apiKey, requestApiVersion: version, correlationId, clientId: this.opts.clientId }, info.requestHeaderVersion(version));
    encode(w);
    size.buf.writeInt32BE(w.length - 4, size.offset);
    return new Promise<unknown>((resolve, reject) => {
      const timeoutMs = this.opts.requestTimeoutMs ?? 30_000;
      const timer = setTimeout(() => {
        this.fail(new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `${this.address}: ${info.name} v${version} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(correlationId, {
        decode,
        holdFrame,
        responseHeaderVersion: info.responseHeaderVersion(version),
        resolve,
        reject,
        timer,
      });
      this.socket.cork();
      for (const chunk of w.chunkList()) this.socket.write(chunk);
      this.socket.uncork();
    });
  }

  /**
   * Runs `fn` with every other request held back until it is done: a re-authentication
   * (KIP-368) must not have application requests between its SaslHandshake and its last
   * SaslAuthenticate, as Kafka's client holds them in the channel while it re-authenticates.
   * `fn` sends its own requests with `duringHold` set.
   */
  async holdRequests<T>(fn: () => Promise<T>): Promise<T> {
    while (this.hold !== null) await this.hold;
    let release = (): void => undefined;
    this.hold = new Promise<void>((r) => (release = r));
    try {
      return await fn();
    } finally {
      this.hold = null;
      release();
    }
  }

  onClose(cb: (err: KafkaError) => void): void {
    if (this.closedError !== null) cb(this.closedError);
    else this.closeListeners.push(cb);
  }

  close(): void {
    this.fail(new KafkaError(ErrorCode.NETWORK_EXCEPTION, `${this.address}: closed by the client`));
  }

  /** A transport that delivers chunks (TLS). */
  private onData(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.frames.push(chunk);
    } catch (err) {
      this.fail(new KafkaError(ErrorCode.NETWORK_EXCEPTION, `${this.address}: ${(err as Error).message}`));
      return;
    }
    this.onFrames(frames);
  }

  /** A read of `n` bytes into the reader's buffer (plain TCP). */
  private onRead(n: number): void {
    if (this.closedError !== null) return;
    let frames: Buffer[];
    try {
      frames = this.reader.received(n);
    } catch (err) {
      this.fail(new KafkaError(ErrorCode.NETWORK_EXCEPTION, `${this.address}: ${(err as Error).message}`));
      return;
    }
    this.onFrames(frames);
  }

  private onFrames(frames: readonly Buffer[]): void {
    for (const frame of frames) {
      // Both response header versions start with the correlation id; it names the request, and
      // so the header version to read.
      const correlationId = frame.length >= 4 ? frame.readInt32BE(0) : -1;
      const p = this.pending.get(correlationId);
      if (p === undefined) {
        this.fail(new KafkaError(ErrorCode.NETWORK_EXCEPTION, `${this.address}: response for unknown correlation id ${correlationId}`));
        return;
      }
      this.pending.delete(correlationId);
      clearTimeout(p.timer);
      try {
        const r = new Reader(frame);
        decodeResponseHeader(r, p.responseHeaderVersion);
        const value = p.decode(r);
        p.resolve(p.holdFrame ? { value, release: () => this.reader.release(frame) } : value);
      } catch (err) {
        p.reject(new KafkaError(ErrorCode.NETWORK_EXCEPTION, `${this.address}: bad response: ${(err as Error).message}`));
        this.fail(new KafkaError(ErrorCode.NETWORK_EXCEPTION, `${this.address}: undecodable response`));
        return;
      }
    }
  }

  private fail(err: KafkaError): void {
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
