/**
 * The follower's append (PartitionLog.appendAsFollower): the leader's batches at the leader's
 * offsets and epochs, as the mirror's append keeps the source's, but only continuing the log end.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildMirrorPidResetBatch } from '../../src/protocol/control-records.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { batch, openLog, readAll, removeDir, tempDir } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir('fjord-follower-');
});
afterEach(async () => {
  await removeDir(dir);
});

describe('append at the leader offsets (follower)', () => {
  it('keeps the leader offsets and epochs, and takes only a first batch at the log end', async () => {
    const { log } = await openLog(dir);
    const b0 = batch(2, { baseOffset: 0, partitionLeaderEpoch: 1 });
    const b1 = batch(3, { baseOffset: 2, partitionLeaderEpoch: 4 });
    expect(await log.appendAsFollower(Buffer.concat([b0, b1]))).toMatchObject({ errorCode: 0, baseOffset: 0, lastOffset: 4 });
    expect(log.epochEntries).toEqual([
      { epoch: 1, startOffset: 0 },
      { epoch: 4, startOffset: 2 },
    ]);
    // A gap above the log end is an answer for another log than this one.
    expect((await log.appendAsFollower(batch(1, { baseOffset: 9, partitionLeaderEpoch: 4 }))).errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    expect((await log.appendAsFollower(batch(1, { baseOffset: 4, partitionLeaderEpoch: 4 }))).errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
    expect(log.logEndOffset).toBe(5);
    expect((await readAll(log)).equals(Buffer.concat([b0, b1]))).toBe(true);
    await log.close();
  });

  it('replays a mirror topic leader log: a MIRROR_PID_RESET clears producer state on the follower too', async () => {
    const { log } = await openLog(dir);
    const idempotent = batch(2, { baseOffset: 0, partitionLeaderEpoch: 1, producerId: 7, producerEpoch: 0, baseSequence: 0 });
    expect((await log.appendAsFollower(idempotent)).errorCode).toBe(0);
    expect(log.producerStates().map((p) => p.producerId)).toEqual([7]);
    const reset = buildMirrorPidResetBatch({ sourceClusterId: 'source-cluster', partitionLeaderEpoch: 1 });
    reset.writeBigInt64BE(2n, 0);
    expect((await log.appendAsFollower(reset)).errorCode).toBe(0);
    expect(log.producerStates()).toEqual([]);
    await log.close();
  });
});
