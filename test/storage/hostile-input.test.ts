import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import type { PartitionLog } from '../../src/storage/partition-log.js';
import { batch, openLog, readAll, removeDir, tempDir } from './helpers.js';

let dir: string;
let mirrorDir: string;
let log: PartitionLog;
let mirror: PartitionLog;
beforeAll(async () => {
  dir = await tempDir();
  mirrorDir = await tempDir();
  log = (await openLog(dir)).log;
  mirror = (await openLog(mirrorDir)).log;
});
afterAll(async () => {
  await log.close();
  await mirror.close();
  await removeDir(dir);
  await removeDir(mirrorDir);
});

const template = batch(3, { producerId: 1, producerEpoch: 0, baseSequence: 0, keys: ['a', 'b', 'c'] });

describe('hostile input', () => {
  it('answers mutated or random bytes with an error code and keeps the log whole', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ minLength: 0, maxLength: 200 }).map((a) => Buffer.from(a)),
          fc.array(fc.record({ at: fc.nat(template.length - 1), byte: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 6 }).map((edits) => {
            const b = Buffer.from(template);
            for (const e of edits) b[e.at] = e.byte;
            return b;
          }),
        ),
        async (bytes) => {
          const leo = log.logEndOffset;
          const r = await log.appendAsLeader(Buffer.from(bytes), 0);
          if (r.errorCode !== 0) expect(log.logEndOffset).toBe(leo);
          else if (log.logEndOffset === leo) expect(r.lastOffset).toBeLessThan(leo); // a duplicate: original offsets
          else expect(r.baseOffset).toBe(leo);
          const m = await mirror.appendAsMirror(Buffer.from(bytes));
          expect(typeof m.errorCode).toBe('number');
        },
      ),
      { numRuns: 300, seed: 4242 },
    );
    // whatever was accepted reads back as valid batches at increasing offsets
    let next = 0;
    for (const v of iterateBatches(await readAll(log))) {
      expect(v.isValid()).toBe(true);
      expect(v.baseOffset).toBe(next);
      next = v.lastOffset + 1;
    }
    expect(next).toBe(log.logEndOffset);
  });
});
