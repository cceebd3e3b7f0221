// Protocol benchmarks: Produce/Fetch encode and decode with the generated codecs, the batch
// header walk, CRC-32C native vs JavaScript, and how Fetch decode cost depends on record size.
// Prints figures only; nothing here asserts on time.
import { CODEC_NAMES, compress, decompress, lz4DecodeJs } from '../src/protocol/compression.js';
import { crc32c } from '../src/protocol/crc32c.js';
import { crc32cJs } from '../test/helpers/crc32c-js.js';
import { decodeFetchResponse, encodeFetchResponse, type FetchResponseInput } from '../src/protocol/generated/messages/fetch-response.js';
import { decodeProduceRequest, encodeProduceRequest, type ProduceRequestInput } from '../src/protocol/generated/messages/produce-request.js';
import { Reader } from '../src/protocol/reader.js';
import { checkBatchHeader, iterateBatches } from '../src/protocol/record-batch.js';
import { buildRecordBatch } from '../src/protocol/records.js';
import { Writer } from '../src/protocol/writer.js';

const MiB = 1024 * 1024;
const PARTITIONS = 100;
const TOPIC_ID = '7a1c2b3d-4e5f-4061-8273-94a5b6c7d8e9';

/** Runs `f` repeatedly for about `ms` milliseconds (after a warm-up) and returns ops per second. */
function rate(f: () => unknown, ms = 400): number {
  const warm = performance.now() + ms / 4;
  while (performance.now() < warm) f();
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < ms) {
    for (let i = 0; i < 4; i++) f();
    n += 4;
    t = performance.now();
  }
  return (n * 1000) / (t - t0);
}

const fmt = (x: number, digits = 1): string => x.toLocaleString('en-US', { maximumFractionDigits: digits });
function line(what: string, opsPerSec: number, bytesPerOp?: number, unit = 'ops/s'): void {
  const mbs = bytesPerOp === undefined ? '' : `  ${fmt((opsPerSec * bytesPerOp) / MiB)} MiB/s`;
  console.log(`${what.padEnd(58)} ${fmt(opsPerSec).padStart(12)} ${unit}${mbs}`);
}

/**
 * About `total` bytes of records with `recordSize`-byte values over `parts` partitions, each
 * partition's records as batches of at most `batchBytes` (one record per batch when larger).
 */
function partitionRecords(total: number, recordSize: number, parts: number, batchBytes: number): Buffer[] {
  const perRecord = recordSize + 10;
  const perPartition = Math.max(1, Math.round(total / parts / perRecord));
  const perBatch = Math.max(1, Math.floor(batchBytes / perRecord));
  const value = Buffer.alloc(recordSize, 0x61);
  const out: Buffer[] = [];
  for (let p = 0; p < parts; p++) {
    const batches: Buffer[] = [];
    for (let offset = 0; offset < perPartition; offset += perBatch) {
      const n = Math.min(perBatch, perPartition - offset);
      batches.push(buildRecordBatch({ baseOffset: offset, now: 1_764_000_000_000, records: Array.from({ length: n }, () => ({ value })) }));
    }
    out.push(Buffer.concat(batches));
  }
  return out;
}

function produceRequest(records: Buffer[]): ProduceRequestInput {
  return { acks: -1, timeoutMs: 30_000, transactionalId: null, topicData: [{ name: 'bench', partitionData: records.map((r, i) => ({ index: i, records: r })) }] };
}

function fetchResponse(records: Buffer[]): FetchResponseInput {
  return {
    responses: [
      {
        topicId: TOPIC_ID,
        partitions: records.map((r, i) => ({ partitionIndex: i, highWatermark: 1_000_000n, lastStableOffset: 1_000_000n, logStartOffset: 0n, abortedTransactions: [], preferredReadReplica: -1, records: r })),
      },
    ],
  };
}

function encodeToBuffer(encode: (w: Writer) => void): Buffer {
  const w = new Writer();
  encode(w);
  return w.toBuffer();
}

const PRODUCE_V = 9;
const FETCH_V = 16;

console.log(`node ${process.version}, ${PARTITIONS} partitions, 1 MiB of records per message\n`);

const small = partitionRecords(MiB, 100, PARTITIONS, 16 * 1024);
const recordBytes = small.reduce((n, b) => n + b.length, 0);

const prodIn = produceRequest(small);
const prodBuf = encodeToBuffer((w) => encodeProduceRequest(w, prodIn, PRODUCE_V));
line(`Produce v${PRODUCE_V} encode (chunk list, records by reference)`, rate(() => {
  const w = new Writer();
  encodeProduceRequest(w, prodIn, PRODUCE_V);
  return w.chunkList();
}), recordBytes);
line(`Produce v${PRODUCE_V} decode (records as slices)`, rate(() => decodeProduceRequest(new Reader(prodBuf), PRODUCE_V)), recordBytes);

const fetchIn = fetchResponse(small);
const fetchBuf = encodeToBuffer((w) => encodeFetchResponse(w, fetchIn, FETCH_V));
line(`Fetch v${FETCH_V} response encode (chunk list)`, rate(() => {
  const w = new Writer();
  encodeFetchResponse(w, fetchIn, FETCH_V);
  return w.chunkList();
}), recordBytes);
line(`Fetch v${FETCH_V} response decode`, rate(() => decodeFetchResponse(new Reader(fetchBuf), FETCH_V)), recordBytes);

// Batch header walk: every batch in 1 MiB of 16 KiB batches; with and without the CRC check.
const blob = Buffer.concat(small);
let batchCount = 0;
for (const _ of iterateBatches(blob)) batchCount++;
const walk = rate(() => {
  let n = 0;
  for (const v of iterateBatches(blob)) n += checkBatchHeader(v).errorCode === 0 ? 1 : 0;
  return n;
});
line(`batch header walk + checks (${batchCount} batches/MiB)`, walk * batchCount, undefined, 'batches/s');
const walkCrc = rate(() => {
  let n = 0;
  for (const v of iterateBatches(blob)) n += v.isValid() ? 1 : 0;
  return n;
}, 300);
line('batch walk + CRC-32C verify', walkCrc * batchCount, blob.length / batchCount, 'batches/s');

// CRC-32C over 1 MiB.
const crcBuf = Buffer.from(blob.subarray(0, MiB));
const native = rate(() => crc32c(crcBuf), 300);
const js = rate(() => crc32cJs(crcBuf), 300);
line('crc32c native (@node-rs/crc32), 1 MiB', native, MiB);
line('crc32c plain JS (slicing-by-8), 1 MiB', js, MiB);
console.log(`${'  native / JS'.padEnd(58)} ${fmt(native / js).padStart(12)} x`);

// Codecs over the records region of a 1 MiB batch of 100-byte JSON-ish records.
{
  let x = 7;
  const rnd = (): number => ((x = (x * 1103515245 + 12345) >>> 0), x >>> 16);
  const plain = Buffer.from(
    Array.from({ length: 25000 }, (_, i) => `{"id":${i},"user":"u${rnd() % 5000}","amount":${rnd() % 100000},"ok":true}`).join(''),
  ).subarray(0, MiB);
  for (const codec of [1, 2, 3, 4]) {
    const z = compress(codec, plain);
    const c = rate(() => compress(codec, plain), 300);
    const d = rate(() => decompress(codec, z), 300);
    console.log(
      `${`${CODEC_NAMES[codec]} 1 MiB (ratio ${fmt(plain.length / z.length, 2)})`.padEnd(40)} compress ${fmt((c * plain.length) / MiB).padStart(8)} MiB/s   decompress ${fmt((d * plain.length) / MiB).padStart(8)} MiB/s`,
    );
  }
  const z = compress(3, plain);
  line('lz4 decompress, JavaScript fallback decoder', rate(() => lz4DecodeJs(z, 2 * MiB), 300), plain.length);
}

// Fetch decode cost: 1 MiB of 100-byte records vs 1 MiB of 100 KiB records, both over 10
// partitions, producer-sized 16 KiB batches for the small records. Records stay slices, so the
// cost should follow the number of partitions and batches, not the number of records.
const PARTS = 10;
const smallRecs = partitionRecords(MiB, 100, PARTS, 16 * 1024);
const bigRecs = partitionRecords(MiB, 100 * 1024, PARTS, 16 * 1024);
function fetchDecodeWalk(buf: Buffer): number {
  const res = decodeFetchResponse(new Reader(buf), FETCH_V);
  let n = 0;
  for (const t of res.responses) for (const p of t.partitions) if (p.records !== null) for (const v of iterateBatches(p.records)) n += v.recordsCount;
  return n;
}
const smallFetch = encodeToBuffer((w) => encodeFetchResponse(w, fetchResponse(smallRecs), FETCH_V));
const bigFetch = encodeToBuffer((w) => encodeFetchResponse(w, fetchResponse(bigRecs), FETCH_V));
const count = (bufs: Buffer[]): number => bufs.reduce((n, b) => n + [...iterateBatches(b)].length, 0);
const smallDecode = rate(() => decodeFetchResponse(new Reader(smallFetch), FETCH_V));
const bigDecode = rate(() => decodeFetchResponse(new Reader(bigFetch), FETCH_V));
const smallRate = rate(() => fetchDecodeWalk(smallFetch));
const bigRate = rate(() => fetchDecodeWalk(bigFetch));
const sm = `${fetchDecodeWalk(smallFetch)} records, ${count(smallRecs)} batches`;
const bg = `${fetchDecodeWalk(bigFetch)} records, ${count(bigRecs)} batches`;
line(`Fetch decode, 1 MiB of 100 B records (${sm})`, smallDecode, smallFetch.length);
line(`Fetch decode, 1 MiB of 100 KiB records (${bg})`, bigDecode, bigFetch.length);
console.log(`${'  cost ratio 100 B / 100 KiB records (goal <= 1.5)'.padEnd(58)} ${fmt(bigDecode / smallDecode, 2).padStart(12)}`);
line('Fetch decode + batch walk, 100 B records', smallRate, smallFetch.length);
line('Fetch decode + batch walk, 100 KiB records', bigRate, bigFetch.length);
console.log(`${'  cost ratio 100 B / 100 KiB records (goal <= 1.5)'.padEnd(58)} ${fmt(bigRate / smallRate, 2).padStart(12)}`);
