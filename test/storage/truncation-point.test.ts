/**
 * The truncation rules the replica follower and the mirror fetcher share, on a real partition log:
 * each row of Kafka's AbstractFetcherThread.getOffsetTruncationState.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PartitionLog } from '../../src/storage/partition-log.js';
import { truncateToLeaderEpochEnd } from '../../src/storage/truncation-point.js';
import { batch, openLog, removeDir, tempDir } from './helpers.js';

let dir: string;
let log: PartitionLog;
beforeEach(async () => {
  dir = await tempDir();
  log = (await openLog(dir)).log;
  await log.appendAsLeader(batch(2), 1); // 0..1
  await log.appendAsLeader(batch(2), 1); // 2..3
  await log.appendAsLeader(batch(3), 3); // 4..6
  await log.appendAsLeader(batch(1), 5); // 7
});
afterEach(async () => {
  await log.close();
  await removeDir(dir);
});

describe('truncation to the leader epoch end', () => {
  it.each([
    ['no end offset: nothing to compare, nothing cut', -1, -1, 8],
    ['no end offset with an epoch: nothing cut', 3, -1, 8],
    ['no epoch (OffsetForLeaderEpoch v0): the leader end offset', -1, 4, 4],
    ['no epoch, an end past ours: nothing cut', -1, 20, 8],
    ['an epoch held here: the smaller of the two ends', 3, 9, 7],
    ['an epoch held here ending later there: our end of it', 1, 6, 4],
    ['an epoch not held here: our end of the largest epoch below it', 2, 6, 4],
    ['an epoch below every epoch here: down to where our first epoch starts', 0, 3, 0],
    ['an epoch above every epoch here: the leader end offset', 9, 7, 7],
  ])('%s', async (_what, epoch, endOffset, end) => {
    expect(await truncateToLeaderEpochEnd(log, { epoch, endOffset })).toEqual({ from: 8, to: end });
    expect(log.logEndOffset).toBe(end);
  });

  it('cuts below the high watermark, which follows the log end down', async () => {
    expect(log.highWatermark).toBe(8);
    await truncateToLeaderEpochEnd(log, { epoch: 2, endOffset: 6 });
    expect(log.highWatermark).toBe(4);
    expect(log.latestEpoch).toBe(1);
  });
});
