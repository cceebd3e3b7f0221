/**
 * Malformed frames against Fjord alone: wrong size prefixes, truncated fields, versions the key
 * does not have, unknown keys, garbage after a valid request, SASL frames out of order. Every frame
 * must get an answer (a Kafka error code, or a normal answer where Kafka's parser accepts the
 * frame too) or a closed connection; the node must keep serving, and a witness connection opened
 * before the barrage must keep getting answers to every request it sends during it.
 */
import fc from 'fast-check';
import type { MessageModel } from '../../../codegen/schema.mjs';
import { API_TABLE } from '../../../src/protocol/generated/api-table.js';
import { encodeApiVersionsRequest } from '../../../src/protocol/generated/messages/api-versions-request.js';
import { decodeApiVersionsResponse } from '../../../src/protocol/generated/messages/api-versions-response.js';
import { Reader } from '../../../src/protocol/reader.js';
import { Writer } from '../../../src/protocol/writer.js';
import { FuzzConnection } from './connection.js';
import { codecFor, requestInput, requestModels } from './schema-requests.js';
import { PLACEHOLDER_POOL } from './steps.js';

export interface MalformedFrame {
  readonly kind: string;
  readonly bytes: Buffer;
  /** The correlation id and API an answer must carry, when the header itself is intact. */
  readonly expect: { readonly correlationId: number; readonly apiKey: number; readonly version: number } | null;
  /** Frames sent before it on the same connection (a SASL exchange out of order). */
  readonly before?: readonly Buffer[];
}

export interface MalformedResult {
  readonly frames: number;
  readonly byKind: Record<string, number>;
  readonly answered: number;
  readonly closed: number;
  readonly failures: { readonly kind: string; readonly frame: string; readonly problem: string }[];
  readonly witnessRequests: number;
}

const CORRELATION = 4242;

function body(apiKey: number, version: number, encode: (w: Writer) => void, correlationId = CORRELATION, header: 'ok' | 'short' = 'ok'): Buffer {
  const w = new Writer();
  w.int16(apiKey).int16(version);
  if (header === 'short') return w.toBuffer();
  w.int32(correlationId).nullableString('fjord-fuzz');
  const info = API_TABLE[apiKey];
  if (info && info.requestHeaderVersion(Math.max(version, info.minVersion)) >= 2 && version >= info.minVersion && version <= info.maxVersion) w.uvarint(0);
  encode(w);
  return w.toBuffer();
}

function sized(payload: Buffer, size = payload.length): Buffer {
  const out = Buffer.allocUnsafe(4 + payload.length);
  out.writeInt32BE(size, 0);
  payload.copy(out, 4);
  return out;
}

/** Frames of every malformed kind, built from schema-generated valid requests. */
export function malformedFrameArb(models: ReadonlyMap<number, MessageModel>, served: ReadonlyMap<number, readonly [number, number]>): fc.Arbitrary<MalformedFrame> {
  const pairs: [number, number][] = [];
  for (const [k, [lo, hi]] of served) if (models.has(k) && k !== 17 && k !== 36) for (let v = lo; v <= hi; v++) pairs.push([k, v]);
  const valid = fc.constantFrom(...pairs).chain(([k, v]) => requestInput(models.get(k)!, v, PLACEHOLDER_POOL).map((input) => ({ k, v, input })));
  const encoded = valid.map(({ k, v, input }) => {
    const codec = codecCache.get(k)!;
    // A Produce with acks=0 is answered by nothing, by design; every other frame here expects an answer.
    if (k === 0 && input['acks'] === 0) input['acks'] = 1;
    try {
      return { k, v, payload: body(k, v, (w) => codec.encode(w, input, v)) };
    } catch {
      return { k, v, payload: body(k, v, () => undefined) };
    }
  });
  const kinds: fc.Arbitrary<MalformedFrame>[] = [
    // A size prefix that does not match what follows: larger (the rest never comes, then the
    // connection is closed by the sender), smaller (the frame ends inside the request), negative, huge.
    fc.tuple(encoded, fc.constantFrom(-1, -2147483648, 0, 1, 3, 2147483647, 104857601)).map(([e, size]) => ({ kind: 'wrong-size', bytes: sized(e.payload, size), expect: null })),
    fc.tuple(encoded, fc.integer({ min: 1, max: 64 })).map(([e, cut]) => ({
      kind: 'smaller-size',
      bytes: sized(e.payload.subarray(0, Math.max(8, e.payload.length - cut)), Math.max(8, e.payload.length - cut)),
      expect: null,
    })),
    // Truncated: the frame says its true length, but the body stops inside a field.
    fc.tuple(encoded, fc.double({ min: 0, max: 0.99, noNaN: true })).map(([e, at]) => {
      const headerEnd = 8;
      const cut = headerEnd + Math.floor((e.payload.length - headerEnd) * at);
      const p = e.payload.subarray(0, Math.max(4, cut));
      return { kind: 'truncated', bytes: sized(p), expect: p.length >= 8 ? { correlationId: CORRELATION, apiKey: e.k, version: e.v } : null };
    }),
    // Garbage after a complete, valid request.
    fc.tuple(encoded, fc.uint8Array({ minLength: 1, maxLength: 32 })).map(([e, g]) => ({ kind: 'garbage-after', bytes: sized(Buffer.concat([e.payload, Buffer.from(g)])), expect: { correlationId: CORRELATION, apiKey: e.k, version: e.v } })),
    // A version the key does not have, or a key no broker has.
    fc.tuple(fc.constantFrom(...pairs), fc.constantFrom(-1, 1, 100, 32767)).map(([[k, v], d]) => {
      const info = API_TABLE[k]!;
      const version = d === 1 ? info.maxVersion + 1 : d === -1 ? Math.max(-1, info.minVersion - 1) : d;
      void v;
      return { kind: 'wrong-version', bytes: sized(body(k, version, (w) => w.int32(0))), expect: { correlationId: CORRELATION, apiKey: k, version } };
    }),
    fc.constantFrom(97, 999, 32767, -1).map((k) => ({ kind: 'unknown-key', bytes: sized(body(k, 0, () => undefined)), expect: null })),
    fc.constant({ kind: 'short-header', bytes: sized(body(18, 3, () => undefined, CORRELATION, 'short')), expect: null }),
    fc.uint8Array({ minLength: 0, maxLength: 48 }).map((g) => ({ kind: 'random-bytes', bytes: sized(Buffer.from(g)), expect: null })),
    // SASL out of order on the plaintext listener: authenticate without a handshake, a handshake
    // twice, a handshake for an unknown mechanism, then an ordinary request.
    fc.constantFrom<'auth-first' | 'handshake-twice' | 'bad-mechanism' | 'auth-v0'>('auth-first', 'handshake-twice', 'bad-mechanism', 'auth-v0').map((order) => {
      const handshake = (mech: string, id: number): Buffer => sized(body(17, 1, (w) => w.string(mech), id));
      const authenticate = (v: number, id: number): Buffer => sized(body(36, v, (w) => (v >= 2 ? w.compactBytes(Buffer.from('\0alice\0secret')) : w.bytes(Buffer.from('\0alice\0secret'))), id));
      switch (order) {
        case 'auth-first':
          return { kind: 'sasl-out-of-order', bytes: authenticate(2, CORRELATION), expect: { correlationId: CORRELATION, apiKey: 36, version: 2 } };
        case 'auth-v0':
          return { kind: 'sasl-out-of-order', bytes: authenticate(0, CORRELATION), expect: { correlationId: CORRELATION, apiKey: 36, version: 0 } };
        case 'handshake-twice':
          return { kind: 'sasl-out-of-order', before: [handshake('PLAIN', 1)], bytes: handshake('PLAIN', CORRELATION), expect: { correlationId: CORRELATION, apiKey: 17, version: 1 } };
        case 'bad-mechanism':
          return { kind: 'sasl-out-of-order', bytes: handshake('NOPE', CORRELATION), expect: { correlationId: CORRELATION, apiKey: 17, version: 1 } };
      }
    }),
  ];
  return fc.oneof(...kinds);
}

const codecCache = new Map<number, Awaited<ReturnType<typeof codecFor>>>();

function hex(b: Buffer): string {
  return b.length > 96 ? `${b.subarray(0, 96).toString('hex')}… (${b.length} bytes)` : b.toString('hex');
}

/** Checks an answer: the right correlation id and a body the API's decoder accepts (or an ApiVersions v0 error answer). */
function checkAnswer(f: MalformedFrame, correlationId: number, payload: Buffer): string | null {
  if (!f.expect) return null;
  if (correlationId !== f.expect.correlationId) return `answered correlation id ${correlationId}, sent ${f.expect.correlationId}`;
  const codec = codecCache.get(f.expect.apiKey);
  const info = API_TABLE[f.expect.apiKey];
  if (!codec || !info) return null;
  const supported = f.expect.version >= info.minVersion && f.expect.version <= info.maxVersion;
  try {
    if (!supported || f.expect.apiKey === 18) {
      // An unsupported version answers as ApiVersions v0 does (Kafka's rule): an error code first.
      const code = payload.readInt16BE(0);
      return supported || code !== 0 ? null : `unsupported version ${f.expect.version} answered error code 0`;
    }
    const r = new Reader(payload);
    if (info.responseHeaderVersion(f.expect.version) >= 1) r.taggedFields();
    codec.decodeResponse(r, f.expect.version);
    return null;
  } catch (e) {
    return `answer does not decode: ${(e as Error).message}`;
  }
}

export interface MalformedOptions {
  readonly port: number;
  readonly seed: number;
  readonly timeLimitMs: number;
  readonly served: ReadonlyMap<number, readonly [number, number]>;
  /** True while the node's process is alive. */
  readonly alive: () => boolean;
}

export async function runMalformedFuzz(opts: MalformedOptions): Promise<MalformedResult> {
  const models = requestModels();
  for (const k of opts.served.keys()) if (models.has(k)) codecCache.set(k, await codecFor(k));
  for (const k of [17, 18, 36]) codecCache.set(k, await codecFor(k));
  const byKind: Record<string, number> = {};
  const failures: MalformedResult['failures'] = [];
  let frames = 0;
  let answered = 0;
  let closed = 0;
  let witnessRequests = 0;
  const witness = await FuzzConnection.open(opts.port);
  const ask = async (): Promise<string | null> => {
    witnessRequests++;
    const r = await witness.call(18, 3, (w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'fuzz-witness', clientSoftwareVersion: '1' }, 3), 30_000);
    if (typeof r === 'string') return `witness connection ${r}`;
    return decodeApiVersionsResponse(r, 3).errorCode === 0 ? null : 'witness got an error';
  };
  const started = Date.now();
  const samples = fc.sample(malformedFrameArb(models as ReadonlyMap<number, MessageModel>, opts.served), { seed: opts.seed, numRuns: 100_000 });
  try {
    for (const f of samples) {
      if (Date.now() - started > opts.timeLimitMs) break;
      frames++;
      byKind[f.kind] = (byKind[f.kind] ?? 0) + 1;
      const c = await FuzzConnection.open(opts.port);
      try {
        for (const b of f.before ?? []) {
          c.write(b);
          await c.next(10_000);
        }
        c.write(f.bytes);
        // A frame whose size promises more than was sent gets nothing until the sender gives up:
        // the client then closes, as a real one would after its request timeout.
        const a = await c.next(f.expect ? 15_000 : 2_000);
        if (a.kind === 'closed') closed++;
        else if (a.kind === 'frame') {
          answered++;
          const problem = checkAnswer(f, a.correlationId, a.body);
          if (problem) failures.push({ kind: f.kind, frame: hex(f.bytes), problem });
        } else if (f.expect) {
          failures.push({ kind: f.kind, frame: hex(f.bytes), problem: 'no answer and the connection stayed open' });
        }
      } finally {
        c.close();
      }
      if (frames % 25 === 0) {
        const w = await ask();
        if (w) failures.push({ kind: f.kind, frame: hex(f.bytes), problem: w });
      }
      if (!opts.alive()) {
        failures.push({ kind: f.kind, frame: hex(f.bytes), problem: 'the node exited' });
        break;
      }
    }
    const w = await ask();
    if (w) failures.push({ kind: 'end', frame: '', problem: w });
  } finally {
    witness.close();
  }
  return { frames, byKind, answered, closed, failures, witnessRequests };
}
