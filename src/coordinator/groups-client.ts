import net from 'node:net';
import { FrameDecoder } from '../protocol/frame-decoder.js';
import { Reader } from '../protocol/reader.js';
import { Writer } from '../protocol/writer.js';
import { API_TABLE } from '../protocol/generated/api-table.js';
import { encodeRequestHeader } from '../protocol/generated/messages/request-header.js';
import { decodeResponseHeader } from '../protocol/generated/messages/response-header.js';

/**
 * A minimal Kafka client connection for the `fjord groups` command: one socket, requests
 * pipelined and answered in order, encoded with the generated codecs.
 */
export class GroupsClient {
  private readonly frames = new FrameDecoder();
  private readonly waiting: { correlationId: number; responseHeaderVersion: number; resolve: (r: Reader) => void; reject: (e: Error) => void }[] = [];
  private nextId = 1;
  private failure: Error | null = null;

  private constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      for (const frame of this.frames.push(chunk)) {
        const w = this.waiting.shift();
        if (!w) continue;
        const r = new Reader(frame);
        const header = decodeResponseHeader(r, w.responseHeaderVersion);
        if (header.correlationId !== w.correlationId) w.reject(new Error(`correlation id ${header.correlationId}, expected ${w.correlationId}`));
        else w.resolve(r);
      }
    });
    const fail = (e: Error): void => {
      this.failure ??= e;
      for (const w of this.waiting.splice(0)) w.reject(this.failure);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed')));
  }

  static connect(bootstrap: string, timeoutMs = 10_000): Promise<GroupsClient> {
    const at = bootstrap.lastIndexOf(':');
    const host = at > 0 ? bootstrap.slice(0, at) : bootstrap;
    const port = at > 0 ? Number(bootstrap.slice(at + 1)) : 9092;
    return new Promise((resolve, reject) => {
      const s = net.connect({ host, port });
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`${bootstrap}: connect timed out`));
      }, timeoutMs);
      s.once('connect', () => {
        clearTimeout(timer);
        resolve(new GroupsClient(s));
      });
      s.once('error', (e) => {
        clearTimeout(timer);
        reject(new Error(`${bootstrap}: ${e.message}`));
      });
    });
  }

  request<Req, Res>(apiKey: number, version: number, encode: (w: Writer, m: Req, v: number) => void, req: Req, decode: (r: Reader, v: number) => Res): Promise<Res> {
    if (this.failure) return Promise.reject(this.failure);
    const info = API_TABLE[apiKey];
    if (!info) return Promise.reject(new Error(`unknown api key ${apiKey}`));
    const correlationId = this.nextId++;
    const w = new Writer(256);
    const size = w.reserve(4);
    encodeRequestHeader(w, { requestApiKey: apiKey, requestApiVersion: version, correlationId, clientId: 'fjord-groups' }, info.requestHeaderVersion(version));
    encode(w, req, version);
    size.buf.writeInt32BE(w.length - 4, size.offset);
    return new Promise<Res>((resolve, reject) => {
      this.waiting.push({
        correlationId,
        responseHeaderVersion: info.responseHeaderVersion(version),
        resolve: (r) => {
          try {
            resolve(decode(r, version));
          } catch (e) {
            reject(e instanceof Error ? e : new Error(String(e)));
          }
        },
        reject,
      });
      this.socket.write(Buffer.concat(w.chunkList()));
    });
  }

  close(): void {
    this.socket.destroy();
  }
}
