import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Codec } from '../../src/protocol/compression.js';
import { buildEndTxnMarkerBatch, buildMirrorPidResetBatch } from '../../src/protocol/control-records.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { buildRecordBatch, type RecordBatchInput } from '../../src/protocol/records.js';
import { CaptureListener } from '../helpers/capture-listener.js';

/**
 * Batches from our builder, in every codec and with control batches between them, served over
 * Fetch by the capture listener to real consumers (librdkafka via kcat, the Java client), which
 * check CRCs, decompress, skip control records and hand back the data records.
 */
const T0 = 1_764_000_000_000;
const expected: { offset: number; key: string; value: string }[] = [];

function blob(): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  const add = (b: Buffer): void => {
    parts.push(b);
    for (const v of iterateBatches(b)) offset = v.lastOffset + 1;
  };
  const data = (name: string, extra: Partial<RecordBatchInput> = {}): void => {
    const records = [0, 1, 2].map((i) => ({
      key: Buffer.from(`${name}-k${i}`),
      value: Buffer.from(`${name} value ${i} `.repeat(8).trim()),
      headers: [{ key: 'codec', value: Buffer.from(name) }],
      timestamp: T0 + offset + i,
    }));
    records.forEach((r, i) => expected.push({ offset: offset + i, key: r.key.toString(), value: r.value.toString() }));
    add(buildRecordBatch({ baseOffset: offset, partitionLeaderEpoch: 0, records, ...extra }));
  };
  data('none');
  data('gzip', { compression: Codec.GZIP });
  add(buildMirrorPidResetBatch({ baseOffset: offset, sourceClusterId: 'source-cluster-id', timestamp: T0 }));
  data('snappy-xerial', { compression: Codec.SNAPPY });
  data('snappy-raw', { compression: Codec.SNAPPY, compressOptions: { snappyFraming: 'raw' } });
  data('lz4', { compression: Codec.LZ4 });
  data('zstd', { compression: Codec.ZSTD });
  data('txn', { producerId: 77, producerEpoch: 1, baseSequence: 0, isTransactional: true });
  add(buildEndTxnMarkerBatch({ baseOffset: offset, commit: true, producerId: 77, producerEpoch: 1, coordinatorEpoch: 0, timestamp: T0 }));
  data('log-append', { timestampType: 'log-append', now: T0 + 1000 });
  return Buffer.concat(parts);
}

const served = blob();
let listener: CaptureListener;
beforeAll(async () => {
  listener = await CaptureListener.start({ topics: ['golden'], partitions: 1, serve: served });
});
afterAll(async () => listener.close());

async function run(cmd: string, args: string[]): Promise<string> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`${cmd} exited ${code}: ${err.slice(-2000)}`);
  return out;
}

// kcat and the Java classpath are installed by test/interop/setup.sh (npm test's pretest step).
describe('librdkafka (kcat) consumes our batches', () => {
  it('reads every data record in every codec, verifying CRCs and skipping control batches', async () => {
    const out = await run('timeout', [
      '30', 'kcat', '-C', '-b', listener.bootstrap, '-t', 'golden', '-p', '0', '-o', 'beginning', '-e',
      '-X', 'check.crcs=true', '-f', '%o|%k|%s\\n',
    ]);
    const got = out.trim().split('\n').map((l) => {
      const [offset, key, value] = l.split('|');
      return { offset: Number(offset), key: key!, value: value! };
    });
    expect(got).toEqual(expected);
  });
});

const JAVA_CP = fileURLToPath(new URL('../../.cache/interop/java-scenarios.classpath', import.meta.url));
describe('the Java client consumes our batches', () => {
  it('reads every data record in every codec, verifying CRCs and skipping control batches', async () => {
    const src = fileURLToPath(new URL('../fixtures/captured/JavaConsume.java', import.meta.url));
    const out = await run('timeout', ['60', 'java', '-cp', readFileSync(JAVA_CP, 'utf8').trim(), src, listener.bootstrap, 'golden', String(expected.length)]);
    const got = out.trim().split('\n').map((l) => {
      const [offset, key, value] = l.split('|');
      return { offset: Number(offset), key: key!, value: value! };
    });
    expect(got).toEqual(expected);
  });
});
