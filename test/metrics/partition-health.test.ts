/**
 * Partition health as computed from a metadata image, for the cluster shapes one node cannot
 * produce by itself (followers out of the ISR, a partition without a leader, ISR changes): the
 * same MetadataImage the controller keeps, changed through its own apply calls, and the counters
 * read back from a prom-client registry as a scrape would.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { MetadataListener } from '../../src/controller/controller.js';
import { MetadataImage } from '../../src/controller/metadata-image.js';
import { IsrChangeCounter, partitionHealth } from '../../src/metrics/partition-health.js';
import { parseScrape, total } from './scrape.js';

const NODE = 1;

function image(): MetadataImage {
  const img = new MetadataImage();
  img.applyTopic('orders', 't-orders');
  const part = (partition: number, leader: number, replicas: number[], isr: number[]) =>
    img.applyPartition('t-orders', { partition, leader, leaderEpoch: 0, partitionEpoch: 0, replicas, isr });
  part(0, NODE, [1, 2, 3], [1, 2, 3]); // healthy
  part(1, NODE, [1, 2, 3], [1, 2]); // under-replicated, at min ISR 2
  part(2, NODE, [1, 2, 3], [1]); // under min ISR
  part(3, 2, [1, 2, 3], [2]); // led elsewhere: not this node's to count
  part(4, -1, [1, 2, 3], []); // offline
  img.applyConfig(2, 'orders', 'min.insync.replicas', '2');
  return img;
}

describe('partition health from the metadata image', () => {
  it('counts under-replicated, under/at min ISR for partitions led here, offline cluster-wide', () => {
    expect(partitionHealth(image(), NODE)).toEqual({ hosted: 5, leaders: 3, underReplicated: 2, underMinIsr: 1, atMinIsr: 1, offline: 1, partitions: 5 });
  });

  it('falls back to the cluster default min.insync.replicas, then Kafka’s 1', () => {
    const img = image();
    img.applyConfig(2, 'orders', 'min.insync.replicas', null);
    expect(partitionHealth(img, NODE)).toMatchObject({ underMinIsr: 0, atMinIsr: 1 });
    img.applyConfig(4, '', 'min.insync.replicas', '3');
    expect(partitionHealth(img, NODE)).toMatchObject({ underMinIsr: 2, atMinIsr: 1 });
  });

  it('counts ISR shrinks and expansions of partitions led here, once per change', async () => {
    const img = image();
    const listeners = new Set<MetadataListener>();
    const register = new Registry();
    const counter = new IsrChangeCounter(img, NODE, register, (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    });
    const change = (partition: number, isr: number[]): void => {
      img.applyPartitionChange('t-orders', partition, { isr });
      for (const l of listeners) l([{ type: 'partitionChange', topicId: 't-orders', partition, leaderEpoch: -1 }], new Map());
    };
    const read = async (name: string): Promise<number> => total(parseScrape(await register.metrics()), name);
    expect(await read('kafka_server_replicamanager_isrshrinks_total')).toBe(0);
    change(0, [1, 2]);
    change(0, [1]);
    change(1, [1, 2, 3]);
    change(3, [2, 3]); // led by node 2
    change(1, [1, 2, 3]); // no size change
    expect(await read('kafka_server_replicamanager_isrshrinks_total')).toBe(2);
    expect(await read('kafka_server_replicamanager_isrexpands_total')).toBe(1);
    counter.close();
    expect(listeners.size).toBe(0);
  });
});
