/** `fjord topics --describe --under-replicated-partitions`, as kafka-topics.sh prints it: partition lines only. */
import { describe, expect, it } from 'vitest';
import { underReplicatedLines, type TopicDescription } from '../../src/cli/topics.js';

const topic = (name: string, isrs: number[][]): TopicDescription => ({
  topic: name,
  topicId: 'AAAAAAAAAAAAAAAAAAAAAQ',
  internal: false,
  partitionCount: isrs.length,
  replicationFactor: 3,
  configs: {},
  partitions: isrs.map((isr, partition) => ({ partition, leader: isr[0] ?? null, replicas: [1, 2, 3], isr })),
});

describe('under-replicated partitions', () => {
  it('lists the partitions whose ISR lacks a replica, and nothing once all are in sync', () => {
    const lines = underReplicatedLines([topic('orders', [[1, 2, 3], [2, 3], [3, 1, 2]]), topic('pay', [[1]])]);
    expect(lines).toEqual([
      '\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 1,2,3\tIsr: 2,3\tElr: \tLastKnownElr: ',
      '\tTopic: pay\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1\tElr: \tLastKnownElr: ',
    ]);
    expect(underReplicatedLines([topic('orders', [[1, 2, 3]])])).toEqual([]);
  });
});
