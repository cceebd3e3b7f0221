/** Leader-epoch cache of mirrored partitions: only source epochs until the topic is STOPPED. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { BrokerConfig } from '../../src/broker/config.js';
import { ConfigResolver } from '../../src/broker/config-resolver.js';
import { createLogger } from '../../src/common/logger.js';
import { MetadataImage } from '../../src/controller/metadata-image.js';
import type { MetadataRecord } from '../../src/controller/metadata-records.js';
import { ReplicaManager } from '../../src/broker/replica-manager.js';
import { holdsSourceEpochs } from '../../src/broker/mirror-epoch-policy.js';
import { LogManager } from '../../src/storage/log-manager.js';
import { MirrorPartitionState as S } from '../../src/mirror/mirror-partition-state.js';
import { buildRecordBatch } from '../../src/protocol/records.js';
import { waitFor } from '../helpers/wait.js';

const dirs: string[] = [];
const managers: ReplicaManager[] = [];
afterEach(async () => {
  for (const m of managers.splice(0)) await m.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const TOPIC_ID = '5f1e2d3c-4b5a-4968-8776-655443322110';

async function setup(mirrored: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-epochs-'));
  dirs.push(dir);
  const image = new MetadataImage();
  const logs = await LogManager.open({ logDirs: [dir] });
  const rm = new ReplicaManager(logs, image, new ConfigResolver(new BrokerConfig(), image), createLogger({}, 'error', () => undefined), holdsSourceEpochs);
  managers.push(rm);
  await rm.start();
  image.applyTopic('m', TOPIC_ID);
  image.applyPartition(TOPIC_ID, { partition: 0, leader: 1, leaderEpoch: 0, partitionEpoch: 0, replicas: [1], isr: [1] });
  if (mirrored) image.applyMirrorTopicState(TOPIC_ID, 'src', S.MIRRORING, 10);
  const log = (await rm.ensureLog('m', 0))!;
  // The epoch assignment a bump starts runs detached from onMetadata: callers wait for its effect.
  const bump = (leaderEpoch: number): void => {
    image.applyPartitionChange(TOPIC_ID, 0, { leaderEpoch });
    const rec: MetadataRecord = { type: 'partitionChange', topicId: TOPIC_ID, partition: 0, leaderEpoch };
    rm.onMetadata([rec], new Map());
  };
  return { rm, image, log, bump };
}

const sourceBatch = (baseOffset: number, epoch: number, n: number): Buffer =>
  buildRecordBatch({ baseOffset, partitionLeaderEpoch: epoch, records: Array.from({ length: n }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${baseOffset + i}`) })) });

it('a mirroring partition keeps only source epochs through destination bumps; once STOPPED a bump starts at the log end', async () => {
  const { image, log, bump } = await setup(true);
  expect(log.latestEpoch).toBe(-1);
  expect((await log.appendAsMirror(sourceBatch(0, 2, 3))).errorCode).toBe(0);
  expect(log.latestEpoch).toBe(2);
  bump(7);
  // Nothing may happen here, so there is nothing to wait for: a fixed wait gives a wrongly started
  // epoch the time to show.
  await new Promise((r) => setTimeout(r, 50));
  expect(log.latestEpoch).toBe(2);
  expect(log.endOffsetForEpoch(2)).toEqual({ epoch: 2, endOffset: 3 });
  expect((await log.appendAsMirror(sourceBatch(3, 3, 2))).errorCode).toBe(0);
  expect(log.latestEpoch).toBe(3);
  expect(log.endOffsetForEpoch(2)).toEqual({ epoch: 2, endOffset: 3 });

  image.applyMirrorTopicState(TOPIC_ID, 'src', S.STOPPED, 20);
  bump(8);
  await waitFor('epoch 8 to start', () => log.latestEpoch === 8, 10_000, 5);
  expect(log.latestEpoch).toBe(8);
  expect(log.endOffsetForEpoch(3)).toEqual({ epoch: 3, endOffset: 5 });
  expect(log.endOffsetForEpoch(8)).toEqual({ epoch: 8, endOffset: 5 });
});

it('an ordinary partition starts every bumped epoch at the log end', async () => {
  const { log, bump } = await setup(false);
  expect(log.latestEpoch).toBe(0);
  bump(4);
  await waitFor('epoch 4 to start', () => log.latestEpoch === 4, 10_000, 5);
  expect(log.latestEpoch).toBe(4);
});
