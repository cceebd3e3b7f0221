/**
 * One raw Kafka connection for the fuzzers: writes request frames (or any bytes), reads response
 * frames in order, and says when the broker closed the connection instead of answering.
 */
import { Socket, connect } from 'node:net';
import { API_TABLE } from '../../../src/protocol/generated/api-table.js';
import { Reader } from '../../../src/protocol/reader.js';
import { Writer } from '../../../src/protocol/writer.js';

export type Answer = { readonly kind: 'frame'; readonly correlationId: number; readonly body: Buffer } | { readonly kind: 'closed' } | { readonly kind: 'silent' };

export class FuzzConnection {
  private buf: Buffer = Buffer.alloc(0);
  private readonly frames: Buffer[] = [];
  private waiter: (() => void) | null = null;
  private isClosed = false;
  private correlation = 1;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      while (this.buf.length >= 4) {
        const size = this.buf.readInt32BE(0);
        if (size < 0 || this.buf.length < 4 + size) break;
        this.frames.push(this.buf.subarray(4, 4 + size));
        this.buf = this.buf.subarray(4 + size);
      }
      this.wake();
    });
    socket.on('close', () => {
      this.isClosed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  static open(port: number, host = '127.0.0.1'): Promise<FuzzConnection> {
    return new Promise((resolve, reject) => {
      const s = connect({ host, port }, () => {
        s.setNoDelay(true);
        resolve(new FuzzConnection(s));
      });
      s.once('error', reject);
    });
  }

  get closed(): boolean {
    return this.isClosed;
  }

  nextCorrelationId(): number {
    return this.correlation++;
  }

  /** A request frame: header v1 or v2 as the API's version requires, then the encoded body. */
  static frame(apiKey: number, version: number, correlationId: number, body: (w: Writer) => void, clientId: string | null = 'fjord-fuzz'): Buffer {
    const w = new Writer();
    w.int16(apiKey).int16(version).int32(correlationId).nullableString(clientId);
    const info = API_TABLE[apiKey];
    if (info && info.requestHeaderVersion(version) >= 2) w.uvarint(0);
    body(w);
    const payload = w.toBuffer();
    const out = Buffer.allocUnsafe(4 + payload.length);
    out.writeInt32BE(payload.length, 0);
    payload.copy(out, 4);
    return out;
  }

  write(bytes: Buffer): void {
    if (!this.isClosed) this.socket.write(bytes);
  }

  /** The next response frame, or `closed`, or `silent` when nothing came within `waitMs`. */
  async next(waitMs: number): Promise<Answer> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const f = this.frames.shift();
      if (f) return { kind: 'frame', correlationId: f.readInt32BE(0), body: f.subarray(4) };
      if (this.isClosed) return { kind: 'closed' };
      const left = deadline - Date.now();
      if (left <= 0) return { kind: 'silent' };
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }

  /** Sends one request and returns a reader positioned at the response body, or why there is none. */
  async call(apiKey: number, version: number, body: (w: Writer) => void, waitMs = 30_000): Promise<Reader | 'closed' | 'silent'> {
    const id = this.nextCorrelationId();
    this.write(FuzzConnection.frame(apiKey, version, id, body));
    const a = await this.next(waitMs);
    if (a.kind !== 'frame') return a.kind;
    const r = new Reader(a.body);
    if ((API_TABLE[apiKey]?.responseHeaderVersion(version) ?? 0) >= 1) r.taggedFields();
    return r;
  }

  close(): void {
    this.socket.destroy();
  }
}
