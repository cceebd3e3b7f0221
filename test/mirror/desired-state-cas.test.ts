/**
 * A desired-state change is decided again inside the atomic metadata write (KIP-1279 spec §4.2):
 * the real controller runs the mirror build step against the image at the log's head. A pause
 * that one node validated against its image, before a stop that another node wrote landed, must
 * not land PAUSED after STOPPED (the topic would be writable with desired PAUSED and every later
 * command refused). The same holds for a delete that did not see a topic started meanwhile, and
 * for include/exclude patterns moved on lists another node has changed since they were read.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildMirrorRecords } from '../../src/broker/mirror-host-impl.js';
import { createLogger } from '../../src/common/logger.js';
import { Controller } from '../../src/controller/controller.js';
import { FileMetadataLog } from '../../src/controller/metadata-log.js';
import type { MirrorControllerOp } from '../../src/mirror/mirror-host.js';
import { MirrorPartitionState as S } from '../../src/mirror/mirror-partition-state.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';

const TOPIC_ID = '6d1f5a2e-1b7c-4a0e-9f3d-2c8b7e6a5d41';
const OTHER_ID = '0b9e8d7c-6a5f-4e3d-8c2b-1a0f9e8d7c6b';
const dirs: string[] = [];
let controller: Controller | undefined;

afterEach(async () => {
  await controller?.close();
  controller = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(): Promise<Controller> {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-mirror-cas-'));
  dirs.push(dir);
  controller = await Controller.open({ nodeId: 1, clusterId: 'mirror-cas-cluster-000', store: await FileMetadataLog.open(dir), log: createLogger({}, 'error', () => undefined) });
  return controller;
}

const write = (c: Controller, ops: MirrorControllerOp[]) => c.write((img) => buildMirrorRecords(c, img, ops));

/** A mirror m1 with topic t bound, desired MIRRORING. */
async function mirrored(c: Controller): Promise<void> {
  const r = await write(c, [
    { type: 'mirrorConfig', mirrorName: 'm1', name: 'bootstrap.servers', value: '127.0.0.1:1' },
    { type: 'createTopic', name: 't', topicId: TOPIC_ID, numPartitions: 1, configs: new Map() },
    { type: 'mirrorTopicState', topicId: TOPIC_ID, mirrorName: 'm1', desiredState: S.MIRRORING, guard: { change: 'start', mirrorName: 'm1', stateValidationOffset: -1 } },
  ]);
  expect(r.errorCode).toBe(0);
}

describe('desired-state changes decided inside the metadata write', () => {
  it('refuses a pause decided before a stop that landed first', async () => {
    const c = await open();
    await mirrored(c);
    // Node 2 validated its pause here (desired MIRRORING → PAUSED) ...
    const pause: MirrorControllerOp = { type: 'mirrorTopicState', topicId: TOPIC_ID, mirrorName: 'm1', desiredState: S.PAUSED, guard: { change: 'pause', mirrorName: 'm1', stateValidationOffset: -1 } };
    // ... then node 1's stop lands.
    expect((await write(c, [{ type: 'mirrorTopicState', topicId: TOPIC_ID, mirrorName: 'm1', desiredState: S.STOPPED, guard: { change: 'stop', mirrorName: 'm1', stateValidationOffset: -1 } }])).errorCode).toBe(0);
    const r = await write(c, [pause]);
    expect(r.errorCode).toBe(ErrorCode.MIRROR_TOPIC_BEING_STOPPED);
    expect(c.image.topic('t')?.mirror?.desiredState).toBe(S.STOPPED);
  });

  it('refuses a change whose StateValidationOffset the topic has moved past, checked at the head of the log', async () => {
    const c = await open();
    await mirrored(c);
    const seen = c.image.offset;
    expect((await write(c, [{ type: 'mirrorTopicState', topicId: TOPIC_ID, mirrorName: 'm1', desiredState: S.PAUSED, guard: { change: 'pause', mirrorName: 'm1', stateValidationOffset: seen } }])).errorCode).toBe(0);
    // A resume decided against `seen` (the topic was MIRRORING then) after the pause landed.
    const r = await write(c, [{ type: 'mirrorTopicState', topicId: TOPIC_ID, mirrorName: 'm1', desiredState: S.STOPPED, guard: { change: 'stop', mirrorName: 'm1', stateValidationOffset: seen } }]);
    expect(r.errorCode).toBe(ErrorCode.INVALID_CLUSTER_MIRROR_STATES);
    expect(c.image.topic('t')?.mirror?.desiredState).toBe(S.PAUSED);
  });

  it('drops a stop that another node already wrote, leaving the topic\'s last change where it was', async () => {
    const c = await open();
    await mirrored(c);
    const stop: MirrorControllerOp = { type: 'mirrorTopicState', topicId: TOPIC_ID, mirrorName: 'm1', desiredState: S.STOPPED, guard: { change: 'stop', mirrorName: 'm1', stateValidationOffset: -1 } };
    expect((await write(c, [stop])).errorCode).toBe(0);
    const at = c.image.topic('t')?.mirror?.lastStateChangeOffset;
    expect((await write(c, [stop])).errorCode).toBe(0);
    expect(c.image.topic('t')?.mirror?.lastStateChangeOffset).toBe(at);
  });

  it('refuses a delete that did not see a topic started meanwhile', async () => {
    const c = await open();
    await mirrored(c);
    expect((await write(c, [{ type: 'mirrorTopicState', topicId: TOPIC_ID, mirrorName: 'm1', desiredState: S.STOPPED, guard: { change: 'stop', mirrorName: 'm1', stateValidationOffset: -1 } }])).errorCode).toBe(0);
    // The delete saw only t; another node starts u before it lands.
    const del: MirrorControllerOp[] = [
      { type: 'mirrorTopicState', topicId: TOPIC_ID, mirrorName: null, desiredState: S.UNKNOWN, guard: { change: 'unbind', mirrorName: 'm1', stateValidationOffset: -1 } },
      { type: 'mirrorEmptiedOf', mirrorName: 'm1', topicIds: [TOPIC_ID] },
      { type: 'mirrorConfig', mirrorName: 'm1', name: 'bootstrap.servers', value: null },
    ];
    expect(
      (
        await write(c, [
          { type: 'createTopic', name: 'u', topicId: OTHER_ID, numPartitions: 1, configs: new Map() },
          { type: 'mirrorTopicState', topicId: OTHER_ID, mirrorName: 'm1', desiredState: S.MIRRORING, guard: { change: 'start', mirrorName: 'm1', stateValidationOffset: -1 } },
        ])
      ).errorCode,
    ).toBe(0);
    const r = await write(c, del);
    expect(r.errorCode).toBe(ErrorCode.INVALID_CLUSTER_MIRROR_STATES);
    expect(c.image.topic('u')?.mirror?.mirrorName).toBe('m1');
    expect(c.image.topic('t')?.mirror?.mirrorName).toBe('m1');
  });

  it('moves include/exclude patterns on the lists as the write finds them, keeping another node\'s change', async () => {
    const c = await open();
    await mirrored(c);
    expect((await write(c, [{ type: 'mirrorConfig', mirrorName: 'm1', name: 'mirror.topics.include', value: 'a' }])).errorCode).toBe(0);
    // Node 2 reads the lists (include a) and stops pattern a ...
    const seen = new Map(c.image.otherConfigs.get(64)?.get('m1') ?? []);
    // ... while node 1's start of b lands first.
    expect((await write(c, [{ type: 'mirrorTopicLists', mirrorName: 'm1', include: ['b'], exclude: [], base: seen }])).errorCode).toBe(0);
    expect((await write(c, [{ type: 'mirrorTopicLists', mirrorName: 'm1', include: [], exclude: ['a'], base: seen }])).errorCode).toBe(0);
    const cfg = c.image.otherConfigs.get(64)?.get('m1');
    expect(cfg?.get('mirror.topics.include')).toBe('b');
    expect(cfg?.get('mirror.topics.exclude')?.split(',')).toEqual(['__.*', 'a']);
  });

  it('refuses a start into a mirror deleted meanwhile', async () => {
    const c = await open();
    await mirrored(c);
    expect((await write(c, [{ type: 'mirrorConfig', mirrorName: 'm1', name: 'bootstrap.servers', value: null }])).errorCode).toBe(0);
    const r = await write(c, [
      { type: 'createTopic', name: 'u', topicId: OTHER_ID, numPartitions: 1, configs: new Map() },
      { type: 'mirrorTopicState', topicId: OTHER_ID, mirrorName: 'm1', desiredState: S.MIRRORING, guard: { change: 'start', mirrorName: 'm1', stateValidationOffset: -1 } },
    ]);
    expect(r.errorCode).toBe(ErrorCode.UNKNOWN_CLUSTER_MIRROR);
    expect(c.image.topic('u')).toBeUndefined();
  });
});
