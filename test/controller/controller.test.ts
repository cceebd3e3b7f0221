/** The embedded controller and its metadata log: atomic writes, validation, replay, torn tails. */
import { appendFileSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Controller } from '../../src/controller/controller.js';
import { createLogger } from '../../src/common/logger.js';
import { ConfigResourceType } from '../../src/protocol/config-resource-type.js';
import { decodeMetadataRecord } from '../../src/controller/metadata-records.js';
import { FileMetadataLog, METADATA_TOPIC_DIR } from '../../src/controller/metadata-log.js';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { decodeRecords } from '../../src/protocol/records.js';

const log = createLogger({}, 'error', () => undefined);

async function open(dir: string): Promise<Controller> {
  return Controller.open({ nodeId: 1, clusterId: 'test-cluster-id-000000', store: await FileMetadataLog.open(dir), log });
}

describe('Controller', () => {
  it('writes Kafka metadata records, one batch per write, and rebuilds the same image on reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fjord-ctl-'));
    const c = await open(dir);
    expect((await c.createTopic('a', 3, new Map([['retention.ms', '1000']]))).errorCode).toBe(0);
    expect((await c.createTopic('b', 1, new Map(), '11111111-2222-3333-4444-555555555555')).errorCode).toBe(0);
    expect((await c.createPartitions('a', 5)).errorCode).toBe(0);
    expect((await c.alterConfigs(ConfigResourceType.TOPIC, 'a', [['retention.ms', null], ['cleanup.policy', 'compact']])).errorCode).toBe(0);
    expect((await c.alterConfigs(ConfigResourceType.BROKER, '', [['log.retention.bytes', '123']])).errorCode).toBe(0);
    const aId = c.image.topic('a')!.topicId;
    expect((await c.bumpLeaderEpoch(aId, 2, 7)).errorCode).toBe(0);
    expect((await c.deleteTopic(c.image.topic('b')!.topicId)).errorCode).toBe(0);
    const ids = await c.allocateProducerIdBlock();
    expect(ids).toEqual({ first: 0, last: 999 });
    await c.close();

    // The segment holds record batches whose values decode as Kafka metadata records.
    const seg = readFileSync(join(dir, METADATA_TOPIC_DIR, '00000000000000000000.log'));
    const batches = [...iterateBatches(seg)];
    expect(batches).toHaveLength(8);
    expect(batches.every((b) => b.isValid())).toBe(true);
    const types = batches.flatMap((b) => decodeRecords(b).map((r) => decodeMetadataRecord(r.value!)!.type));
    expect(types.slice(0, 5)).toEqual(['topic', 'partition', 'partition', 'partition', 'config']);
    expect(types).toContain('removeTopic');
    expect(types).toContain('partitionChange');
    expect(types).toContain('producerIds');

    const again = await open(dir);
    const a = again.image.topic('a')!;
    expect(a.topicId).toBe(aId);
    expect(a.partitions.map((p) => p.leaderEpoch)).toEqual([0, 0, 7, 0, 0]);
    expect([...a.configs]).toEqual([['cleanup.policy', 'compact']]);
    expect(again.image.topic('b')).toBeUndefined();
    expect(again.image.brokerConfigs.get('')?.get('log.retention.bytes')).toBe('123');
    expect(await again.allocateProducerIdBlock()).toEqual({ first: 1000, last: 1999 });
    await again.close();
  });

  it('validates against the image, serializing concurrent writes', async () => {
    const c = await open(mkdtempSync(join(tmpdir(), 'fjord-ctl-')));
    const results = await Promise.all([c.createTopic('same', 1, new Map()), c.createTopic('same', 2, new Map())]);
    expect(results.map((r) => r.errorCode).sort()).toEqual([0, 36]);
    expect((await c.createTopic('bad/name', 1, new Map())).errorCode).toBe(17);
    expect((await c.createTopic('a_b', 1, new Map())).errorCode).toBe(0);
    expect(await c.createTopic('a.b', 1, new Map())).toMatchObject({ errorCode: 17, errorMessage: "Topic 'a.b' collides with existing topic: a_b" });
    expect((await c.createTopic('zero', 0, new Map())).errorCode).toBe(37);
    expect((await c.createPartitions('same', 1)).errorCode).toBe(37);
    expect((await c.createPartitions('missing', 3)).errorCode).toBe(3);
    expect((await c.deleteTopic('00000000-0000-0000-0000-0000000000ff')).errorCode).toBe(100);
    await c.close();
  });

  it('cuts a torn trailing batch on open and continues at the right offset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fjord-ctl-'));
    const c = await open(dir);
    await c.createTopic('kept', 2, new Map());
    await c.close();
    const file = join(dir, METADATA_TOPIC_DIR, '00000000000000000000.log');
    const good = statSync(file).size;
    // Half a batch, as a crash in the middle of a write leaves it.
    appendFileSync(file, Buffer.from([0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 90, 0, 0, 0, 1, 2, 9, 9]));
    const again = await open(dir);
    expect(statSync(file).size).toBe(good);
    expect(again.image.topic('kept')!.partitions).toHaveLength(2);
    const before = again.image.offset;
    await again.createTopic('next', 1, new Map());
    expect(again.image.offset).toBe(before + 2);
    await again.close();
    const third = await open(dir);
    expect(third.image.topic('next')).toBeDefined();
    await third.close();
  });
});
