// int64 as bigint vs number in the generated codecs: decode and encode a Fetch response with 100
// partitions, a Produce response with 100 partitions and a Produce request (no int64 fields; a
// control). The number variant is generated on the fly with `--int64=number` into a temp dir.
//
//   node bench/run.mjs bench/protocol-codec.ts
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Reader } from '../src/protocol/reader.js';
import { Writer } from '../src/protocol/writer.js';

type Decode = (r: Reader, v: number) => unknown;
type Encode = (w: Writer, m: never, v: number) => void;

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const NAMES = ['FetchResponse', 'ProduceResponse', 'ProduceRequest'];
const tmp = mkdtempSync(join(tmpdir(), 'fjord-int64-'));
execFileSync(process.execPath, [join(root, 'codegen/generate.mjs'), tmp, '--int64=number', `--only=${NAMES.join(',')}`, `--protocol=${join(root, 'src/protocol')}`]);

async function load(dir: string, file: string, name: string): Promise<{ decode: Decode; encode: Encode }> {
  const mod = (await import(pathToFileURL(join(dir, `${file}.ts`)).href)) as Record<string, unknown>;
  return { decode: mod[`decode${name}`] as Decode, encode: mod[`encode${name}`] as Encode };
}

const big = {
  fetch: await load(join(root, 'src/protocol/generated/messages'), 'fetch-response', 'FetchResponse'),
  produceRes: await load(join(root, 'src/protocol/generated/messages'), 'produce-response', 'ProduceResponse'),
  produceReq: await load(join(root, 'src/protocol/generated/messages'), 'produce-request', 'ProduceRequest'),
};
const num = {
  fetch: await load(join(tmp, 'messages'), 'fetch-response', 'FetchResponse'),
  produceRes: await load(join(tmp, 'messages'), 'produce-response', 'ProduceResponse'),
  produceReq: await load(join(tmp, 'messages'), 'produce-request', 'ProduceRequest'),
};
rmSync(tmp, { recursive: true, force: true });

const records = Buffer.alloc(10 * 1024, 1); // 100 × 10 KiB ≈ 1 MiB, written by reference
const ids = Array.from({ length: 10 }, (_, t) => `0000000${t}-0000-0000-0000-000000000000`);

function fetchResponse(int64: (n: number) => bigint | number) {
  return {
    throttleTimeMs: 0,
    sessionId: 1,
    responses: ids.map((topicId) => ({
      topicId,
      partitions: Array.from({ length: 10 }, (_, p) => ({
        partitionIndex: p,
        highWatermark: int64(123_456_789 + p),
        lastStableOffset: int64(123_456_789 + p),
        logStartOffset: int64(1000),
        abortedTransactions: [],
        records,
      })),
    })),
  };
}

function produceResponse(int64: (n: number) => bigint | number) {
  return {
    responses: ids.map((_, t) => ({
      name: `topic-${t}`,
      partitionResponses: Array.from({ length: 10 }, (_, p) => ({ index: p, baseOffset: int64(5_000_000 + p), logAppendTimeMs: int64(-1), logStartOffset: int64(0) })),
    })),
  };
}

const produceRequest = {
  transactionalId: null,
  acks: -1,
  timeoutMs: 30000,
  topicData: ids.map((_, t) => ({ name: `topic-${t}`, partitionData: Array.from({ length: 10 }, (_, p) => ({ index: p, records })) })),
};

function encodeOnce(enc: Encode, msg: unknown, v: number): Buffer[] {
  const w = new Writer();
  enc(w, msg as never, v);
  return w.chunkList();
}

/** Operations per second over ~0.3 s after a warm-up. */
function rate(fn: () => void): number {
  for (let i = 0; i < 2000; i++) fn();
  let n = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0n;
  while (elapsed < 300_000_000n) {
    for (let i = 0; i < 200; i++) fn();
    n += 200;
    elapsed = process.hrtime.bigint() - start;
  }
  return n / (Number(elapsed) / 1e9);
}

const cases: Array<[string, { decode: Decode; encode: Encode }, { decode: Decode; encode: Encode }, unknown, unknown, number]> = [
  ['Fetch response v16, 100 partitions', big.fetch, num.fetch, fetchResponse(BigInt), fetchResponse(Number), 16],
  ['Produce response v11, 100 partitions', big.produceRes, num.produceRes, produceResponse(BigInt), produceResponse(Number), 11],
  ['Produce request v11, 100 partitions (no int64)', big.produceReq, num.produceReq, produceRequest, produceRequest, 11],
];

console.log('int64 as bigint vs number (ops/s, higher is better; ratio = number / bigint)');
for (const [label, b, n, bigMsg, numMsg, v] of cases) {
  const bytes = Buffer.concat(encodeOnce(b.encode, bigMsg, v));
  if (!bytes.equals(Buffer.concat(encodeOnce(n.encode, numMsg, v)))) throw new Error(`${label}: variants disagree`);
  // alternate the variants and keep each one's best round, so JIT warm-up order does not decide
  const best = [0, 0, 0, 0];
  for (let round = 0; round < 3; round++) {
    const r = [
      rate(() => b.decode(new Reader(bytes), v)),
      rate(() => n.decode(new Reader(bytes), v)),
      rate(() => encodeOnce(b.encode, bigMsg, v)),
      rate(() => encodeOnce(n.encode, numMsg, v)),
    ];
    r.forEach((x, i) => (best[i] = Math.max(best[i]!, x)));
  }
  const [decB, decN, encB, encN] = best as [number, number, number, number];
  console.log(`${label} (${bytes.length} bytes)`);
  console.log(`  decode  bigint ${decB.toFixed(0).padStart(8)}  number ${decN.toFixed(0).padStart(8)}  ratio ${(decN / decB).toFixed(2)}`);
  console.log(`  encode  bigint ${encB.toFixed(0).padStart(8)}  number ${encN.toFixed(0).padStart(8)}  ratio ${(encN / encB).toFixed(2)}`);
}
