/**
 * A node's membership against a real etcd: a node that registers while its metadata image is
 * behind the log end stays fenced (no leadership, no controller campaign) until the image has
 * applied that offset, as KRaft keeps a registering broker fenced until it caught up; and the
 * start grace keeps a node it cannot see in leaderships for one session timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Etcd3 } from 'etcd3';
import { createLogger } from '../../src/common/logger.js';
import { EtcdQuorum } from '../../src/controller/etcd/etcd-quorum.js';
import { eventually } from '../helpers/cluster.js';
import { startEtcd, type RunningEtcd } from '../helpers/etcd.js';

let etcd: RunningEtcd;

beforeAll(async () => {
  etcd = await startEtcd();
}, 60_000);

afterAll(async () => {
  await etcd?.destroy();
});

function quorum(prefix: string, nodeId: number): EtcdQuorum {
  return EtcdQuorum.create({
    endpoints: [etcd.endpoint],
    prefix,
    self: { nodeId, host: '127.0.0.1', port: 1, endpoints: [], rack: null },
    sessionTimeoutMs: 3000,
    heartbeatIntervalMs: 500,
    log: createLogger({}, 'error'),
  });
}

describe('registration catch-up', () => {
  it('stays fenced, campaigns for nothing and names no leader until its image reached the log end it registered at', async () => {
    const prefix = '/catch-up';
    const client = new Etcd3({ hosts: [etcd.endpoint] });
    // The metadata log moved on to offset 41 while this node was away.
    await client.put(`${prefix}/metadata/log-head`).value('41');
    const q = quorum(prefix, 1);
    try {
      await q.start();
      let applied = 10;
      const listeners = new Set<() => void>();
      q.trackMetadata(
        () => applied,
        (cb) => {
          listeners.add(cb);
          return () => listeners.delete(cb);
        },
      );
      expect(q.brokerEpoch()).toBeGreaterThan(0);
      expect(q.fenced).toBe(true);
      expect(q.isActiveController).toBe(false);
      expect(q.controllerFence()).toBeNull();
      // Caught up part of the way: still fenced.
      applied = 40;
      for (const cb of listeners) cb();
      expect(q.fenced).toBe(true);
      applied = 41;
      for (const cb of listeners) cb();
      expect(q.fenced).toBe(false);
      // Only now does it run for controller (the seat was vacant all along).
      await eventually('the controller seat', async () => q.isActiveController);
    } finally {
      await q.close();
      client.close();
    }
  });

  it('as a controller just registered, keeps a node it cannot see in leaderships for one session timeout', async () => {
    const q = quorum('/grace', 1);
    try {
      await q.start();
      q.trackMetadata(
        () => -1,
        () => () => undefined,
      );
      expect(q.fenced).toBe(false);
      expect(q.isEligible(2)).toBe(false);
      expect(q.awaitingReturn(2)).toBe(true);
      await eventually('the grace to end', async () => !q.awaitingReturn(2), 10_000);
      expect(q.awaitingReturn(1)).toBe(false);
    } finally {
      await q.close();
    }
  });
});
