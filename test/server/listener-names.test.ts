/**
 * A node with two listeners answers DescribeQuorum v2 with the name, host and port of the listener
 * it was asked on (its embedded controller is reached on every listener), and DescribeCluster
 * with that listener's address, so a client that came in on a named listener stays on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WireClient } from '../broker/wire.js';
import { startSecureNode, type SecureNode } from './secure-node.js';
import { encodeDescribeQuorumRequest } from '../../src/protocol/generated/messages/describe-quorum-request.js';
import { decodeDescribeQuorumResponse } from '../../src/protocol/generated/messages/describe-quorum-response.js';
import { encodeDescribeClusterRequest } from '../../src/protocol/generated/messages/describe-cluster-request.js';
import { decodeDescribeClusterResponse } from '../../src/protocol/generated/messages/describe-cluster-response.js';

let node: SecureNode;

beforeAll(async () => {
  node = await startSecureNode({
    listeners: 'PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT',
  });
}, 60_000);

afterAll(async () => {
  await node?.close();
});

describe('listener names in DescribeQuorum and DescribeCluster', () => {
  it('names the listener the request came in on', async () => {
    for (const listener of ['PLAINTEXT', 'INTERNAL']) {
      const c = await WireClient.connect(node.port(listener));
      const q = decodeDescribeQuorumResponse(
        await c.call(55, 2, (w) => encodeDescribeQuorumRequest(w, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }, 2)),
        2,
      );
      expect(q.nodes[0]!.listeners).toEqual([expect.objectContaining({ name: listener, host: '127.0.0.1', port: node.port(listener) })]);
      const d = decodeDescribeClusterResponse(await c.call(60, 1, (w) => encodeDescribeClusterRequest(w, { includeClusterAuthorizedOperations: false, endpointType: 1 }, 1)), 1);
      expect(d.brokers[0]).toMatchObject({ brokerId: 1, host: '127.0.0.1', port: node.port(listener) });
      c.close();
    }
  });
});
