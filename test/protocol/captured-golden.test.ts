import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_TABLE } from '../../src/protocol/generated/api-table.js';
import { decodeProduceRequest } from '../../src/protocol/generated/messages/produce-request.js';
import { decodeRequestHeader } from '../../src/protocol/generated/messages/request-header.js';
import { Reader } from '../../src/protocol/reader.js';
import { BATCH } from '../../src/protocol/record-batch.js';
import { captureClient } from '../fixtures/captured/capture.js';
import { checkCapturedDir, readManifest } from '../fixtures/captured/verify.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/captured/', import.meta.url));
const CLIENTS = ['kafkajs', 'platformatic', 'kcat', 'java'];

describe('golden request frames captured from real clients', () => {
  for (const client of CLIENTS) {
    const dir = join(FIXTURES, client);
    const manifest = readManifest(dir);
    describe(`${client} (${manifest.clientVersion})`, () => {
      for (const check of checkCapturedDir(dir)) {
        it(`${check.file} decodes, re-encodes byte-identically${check.batches > 0 ? ', and its records verify' : ''}`, () => {
          expect(check.problems).toEqual([]);
          if (check.file.startsWith('produce')) {
            expect(check.batches).toBe(1);
            expect(check.records).toBe(5);
          }
        });
      }
    });
  }

  it('covers every codec across the clients, and flexible and classic versions', () => {
    const produce = CLIENTS.flatMap((c) => readManifest(join(FIXTURES, c)).fixtures.filter((f) => f.apiKey === 0));
    expect(new Set(produce.map((f) => f.codec))).toEqual(new Set(['none', 'gzip', 'snappy', 'lz4', 'zstd']));
    expect(produce.some((f) => f.apiVersion >= 9)).toBe(true);
    expect(produce.some((f) => f.apiVersion < 9)).toBe(true);
  });
});

function firstRecords(file: string): Buffer {
  const frame = readFileSync(join(FIXTURES, file));
  const version = frame.readInt16BE(2);
  const r = new Reader(frame);
  decodeRequestHeader(r, API_TABLE[0]!.requestHeaderVersion(version));
  const records = decodeProduceRequest(r, version).topicData[0]!.partitionData[0]!.records!;
  return records.subarray(BATCH.HEADER_SIZE);
}

it('snappy: the Java client writes xerial framing, librdkafka and platformatic raw blocks (both decode above)', () => {
  const xerial = Buffer.from('\x82SNAPPY\0', 'latin1');
  expect(firstRecords('java/produce-v11-snappy.bin').subarray(0, 8)).toEqual(xerial);
  expect(firstRecords('kcat/produce-v7-snappy.bin').subarray(0, 8)).not.toEqual(xerial);
  expect(firstRecords('platformatic/produce-v11-snappy.bin').subarray(0, 8)).not.toEqual(xerial);
});


describe('live capture from kcat (installed by test/interop/setup.sh)', () => {
  it('captures every codec from librdkafka and the frames verify', { timeout: 60_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), 'fjord-capture-'));
    try {
      const manifest = await captureClient(out, 'kcat');
      expect(manifest.fixtures.filter((f) => f.apiKey === 0).length).toBe(5);
      const checks = checkCapturedDir(join(out, 'kcat'));
      expect(checks.flatMap((c) => c.problems)).toEqual([]);
      expect(readdirSync(join(out, 'kcat')).length).toBe(manifest.fixtures.length + 1);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
