import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildEndTxnMarkerBatch, buildMirrorPidResetBatch } from '../../src/protocol/control-records.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { batch, openLog, readAll, removeDir, tempDir } from './helpers.js';

let src: string;
let dst: string;
beforeEach(async () => {
  src = await tempDir('fjord-src-');
  dst = await tempDir('fjord-dst-');
});
afterEach(async () => {
  await removeDir(src);
  await removeDir(dst);
});

describe('append at source offsets (mirror)', () => {
  it('keeps offsets and epochs byte for byte: segment files compare equal', async () => {
    const { log: source } = await openLog(src);
    for (let i = 0; i < 12; i++) {
      await source.appendAsLeader(batch(3, { tag: `m${i}`, producerId: 77, producerEpoch: 0, baseSequence: i * 3 }), i < 6 ? 2 : 5);
    }
    const all = await readAll(source);
    const { log: mirror } = await openLog(dst);
    // feed it in uneven chunks of whole batches, as fetch responses would
    let at = 0;
    let n = 0;
    while (at < all.length) {
      let end = at;
      for (let k = 0; k <= n % 3 && end < all.length; k++) end += 12 + all.readInt32BE(end + 8);
      const r = await mirror.appendAsMirror(Buffer.from(all.subarray(at, end)));
      expect(r.errorCode).toBe(0);
      at = end;
      n++;
    }
    expect(mirror.logEndOffset).toBe(source.logEndOffset);
    expect(mirror.highWatermark).toBe(36);
    expect(mirror.epochEntries).toEqual(source.epochEntries);
    expect(mirror.endOffsetForEpoch(2)).toEqual(source.endOffsetForEpoch(2));
    expect(mirror.producerStates()).toEqual(source.producerStates());
    await source.close();
    await mirror.close();
    const a = await readFile(join(src, '00000000000000000000.log'));
    const b = await readFile(join(dst, '00000000000000000000.log'));
    expect(b.equals(a)).toBe(true);
    expect(await readFile(join(dst, 'leader-epoch-checkpoint'), 'utf8')).toBe(await readFile(join(src, 'leader-epoch-checkpoint'), 'utf8'));
  });

  it('refuses batches below the log end and accepts gaps above it', async () => {
    const { log: mirror } = await openLog(dst);
    const b0 = batch(2, { baseOffset: 0, partitionLeaderEpoch: 1 });
    expect((await mirror.appendAsMirror(b0)).errorCode).toBe(0);
    const again = batch(2, { baseOffset: 1, partitionLeaderEpoch: 1 });
    expect((await mirror.appendAsMirror(again)).errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    const gap = batch(2, { baseOffset: 10, partitionLeaderEpoch: 3 });
    expect(await mirror.appendAsMirror(gap)).toMatchObject({ errorCode: 0, baseOffset: 10, lastOffset: 11 });
    expect(mirror.logEndOffset).toBe(12);
    const strict = await mirror.appendAsMirror(batch(1, { baseOffset: 20, partitionLeaderEpoch: 3 }), { requireContiguous: true });
    expect(strict.errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    expect((await mirror.appendAsMirror(batch(1, { baseOffset: 12, partitionLeaderEpoch: 3 }), { requireContiguous: true })).errorCode).toBe(0);
    expect(mirror.epochEntries).toEqual([
      { epoch: 1, startOffset: 0 },
      { epoch: 3, startOffset: 10 },
    ]);
    const bad = batch(1, { baseOffset: 13, partitionLeaderEpoch: 3 });
    bad.writeUInt8(0xff ^ (bad.at(-1) as number), bad.length - 1);
    expect((await mirror.appendAsMirror(bad, { verifyCrc: true })).errorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
    await mirror.close();
  });

  it('starts an empty log at the source offset', async () => {
    const { log: mirror } = await openLog(dst);
    await mirror.truncateFullyAndStartAt(500);
    expect(await mirror.appendAsMirror(batch(2, { baseOffset: 500, partitionLeaderEpoch: 7 }))).toMatchObject({ errorCode: 0, baseOffset: 500 });
    expect(mirror.logStartOffset).toBe(500);
    expect(mirror.latestEpoch).toBe(7);
    await mirror.close();
  });

  it('tracks mirrored transactions and clears all producer state on MIRROR_PID_RESET, also on rebuild', async () => {
    const { log: mirror } = await openLog(dst);
    let off = 0;
    const put = async (b: Buffer) => {
      b.writeBigInt64BE(BigInt(off), 0);
      const r = await mirror.appendAsMirror(b);
      expect(r.errorCode).toBe(0);
      off = r.lastOffset + 1;
    };
    await put(batch(2, { producerId: 5, producerEpoch: 1, baseSequence: 0, partitionLeaderEpoch: 0 }));
    await put(batch(2, { producerId: 6, producerEpoch: 0, baseSequence: 0, isTransactional: true, partitionLeaderEpoch: 0 }));
    expect(mirror.lastStableOffset).toBe(2);
    await put(buildEndTxnMarkerBatch({ commit: false, producerId: 6, producerEpoch: 0, coordinatorEpoch: 0, partitionLeaderEpoch: 0 }));
    expect(mirror.lastStableOffset).toBe(5);
    await put(batch(2, { producerId: 6, producerEpoch: 0, baseSequence: 2, isTransactional: true, partitionLeaderEpoch: 0 }));
    expect(mirror.producerStates().map((p) => p.producerId).sort()).toEqual([5, 6]);
    await put(buildMirrorPidResetBatch({ sourceClusterId: 'source-cluster', partitionLeaderEpoch: 3 }));
    expect(mirror.producerStates()).toEqual([]);
    expect(mirror.lastStableOffset).toBe(mirror.logEndOffset);
    // writable now: a producer the source knew starts afresh without sequence complaints
    expect((await mirror.appendAsLeader(batch(1, { producerId: 5, producerEpoch: 1, baseSequence: 99 }), 4)).errorCode).toBe(0);
    await mirror.flush();
    await mirror.closeHandlers();
    const { log: rebuilt } = await openLog(dst);
    expect(rebuilt.producerStates().map((p) => p.producerId)).toEqual([5]);
    expect(rebuilt.lastStableOffset).toBe(rebuilt.logEndOffset);
    const r = await rebuilt.read({ fetchOffset: 0, maxOffset: rebuilt.logEndOffset, maxBytes: 1 << 20, minOneMessage: true, readCommitted: true });
    expect(r.abortedTransactions).toEqual([{ producerId: 6, firstOffset: 2 }]);
    await rebuilt.close();
  });

  it('clears producer state when the leader appends MIRROR_PID_RESET (failover)', async () => {
    const { log } = await openLog(dst);
    await log.appendAsLeader(batch(1, { producerId: 9, producerEpoch: 0, baseSequence: 0 }), 0);
    expect(log.producerStates().length).toBe(1);
    const reset = buildMirrorPidResetBatch({ sourceClusterId: 'x' });
    expect((await log.appendAsLeader(reset, 1, { origin: 'coordinator' })).errorCode).toBe(0);
    expect(log.producerStates()).toEqual([]);
    await log.close();
  });
});
