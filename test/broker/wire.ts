/** A raw Kafka-protocol connection for tests: frames in and out, no client library in between. */
import { Socket, connect } from 'node:net';
import { API_TABLE } from '../../src/protocol/generated/api-table.js';
import { Reader } from '../../src/protocol/reader.js';
import { Writer } from '../../src/protocol/writer.js';

export interface RawResponse {
  readonly correlationId: number;
  /** The body after the response header (header v0: correlation id only; v1: + tagged fields). */
  readonly body: Buffer;
  readonly frame: Buffer;
}

export class WireClient {
  private buf = Buffer.alloc(0);
  private waiters: ((r: RawResponse) => void)[] = [];
  private readonly queued: RawResponse[] = [];
  readonly closed: Promise<void>;
  private nextCorrelation = 1;

  private constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      while (this.buf.length >= 4) {
        const size = this.buf.readInt32BE(0);
        if (this.buf.length < 4 + size) break;
        const frame = this.buf.subarray(4, 4 + size);
        this.buf = this.buf.subarray(4 + size);
        const r: RawResponse = { correlationId: frame.readInt32BE(0), body: frame.subarray(4), frame };
        const w = this.waiters.shift();
        if (w) w(r);
        else this.queued.push(r);
      }
    });
    this.closed = new Promise((r) => socket.once('close', () => r()));
    socket.on('error', () => undefined);
  }

  static connect(port: number): Promise<WireClient> {
    return new Promise((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port }, () => resolve(new WireClient(s)));
      s.once('error', reject);
    });
  }

  /** Encodes a request frame (header for the API's version, then `body`). */
  frame(apiKey: number, version: number, body: (w: Writer) => void, correlationId = this.nextCorrelation++): Buffer {
    const w = new Writer();
    w.int16(apiKey).int16(version).int32(correlationId).nullableString('wire-test');
    const headerVersion = API_TABLE[apiKey]?.requestHeaderVersion(version) ?? 1;
    if (headerVersion >= 2) w.uvarint(0);
    body(w);
    const payload = w.toBuffer();
    const out = Buffer.allocUnsafe(4 + payload.length);
    out.writeInt32BE(payload.length, 0);
    payload.copy(out, 4);
    return out;
  }

  write(b: Buffer): void {
    this.socket.write(b);
  }

  next(timeoutMs = 10_000): Promise<RawResponse> {
    const q = this.queued.shift();
    if (q) return Promise.resolve(q);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no response')), timeoutMs);
      this.waiters.push((r) => {
        clearTimeout(t);
        resolve(r);
      });
    });
  }

  /** Sends one request and reads its response body (skipping a v1 header's tagged fields). */
  async call(apiKey: number, version: number, body: (w: Writer) => void, timeoutMs = 10_000): Promise<Reader> {
    this.write(this.frame(apiKey, version, body));
    const r = await this.next(timeoutMs);
    const reader = new Reader(r.body);
    if ((API_TABLE[apiKey]?.responseHeaderVersion(version) ?? 0) >= 1) reader.taggedFields();
    return reader;
  }

  close(): void {
    this.socket.destroy();
  }
}
