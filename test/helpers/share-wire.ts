/**
 * Raw-socket steps the share-group tests share: one node with one WireClient, topics created by
 * CreateTopics v7 (their ids kept), ShareGroupHeartbeat v1, group configs by
 * IncrementalAlterConfigs, and the clean-up of a node a test may have restarted.
 */
import { rmSync } from 'node:fs';
import { expect } from 'vitest';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeIncrementalAlterConfigsRequest } from '../../src/protocol/generated/messages/incremental-alter-configs-request.js';
import { decodeIncrementalAlterConfigsResponse } from '../../src/protocol/generated/messages/incremental-alter-configs-response.js';
import { encodeShareGroupHeartbeatRequest, type ShareGroupHeartbeatRequestInput } from '../../src/protocol/generated/messages/share-group-heartbeat-request.js';
import { decodeShareGroupHeartbeatResponse } from '../../src/protocol/generated/messages/share-group-heartbeat-response.js';
import { WireClient } from '../broker/wire.js';
import { startNode, type RunningNode } from './node.js';

/** A started node and a raw client connected to it. */
export async function nodeWithClient(overrides: Record<string, string | number>): Promise<{ node: RunningNode; c: WireClient }> {
  const node = await startNode({ overrides });
  return { node, c: await WireClient.connect(node.port) };
}

/** Closes the client, stops the node and removes its directory (which a restarted node reuses, and destroy() then leaves behind). */
export async function removeNode(node: RunningNode | undefined, c: WireClient | undefined): Promise<void> {
  c?.close();
  await node?.destroy();
  if (node !== undefined) rmSync(node.dataDir, { recursive: true, force: true });
}

/** Creates a topic with replication factor 1; returns its id. */
export async function createTopicWithId(c: WireClient, name: string, numPartitions: number): Promise<string> {
  const r = decodeCreateTopicsResponse(await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name, numPartitions, replicationFactor: 1 }], timeoutMs: 5000 }, 7)), 7);
  expect(r.topics[0]!.errorCode).toBe(0);
  return r.topics[0]!.topicId;
}

export async function shareHeartbeat(c: WireClient, req: ShareGroupHeartbeatRequestInput) {
  return decodeShareGroupHeartbeatResponse(await c.call(76, 1, (w) => encodeShareGroupHeartbeatRequest(w, req, 1)), 1);
}

/** Sets group configs (resource type 32) and expects no error. */
export async function setGroupConfigs(c: WireClient, group: string, configs: Record<string, string>): Promise<void> {
  const r = decodeIncrementalAlterConfigsResponse(
    await c.call(44, 1, (w) =>
      encodeIncrementalAlterConfigsRequest(w, { resources: [{ resourceType: 32, resourceName: group, configs: Object.entries(configs).map(([name, value]) => ({ name, configOperation: 0, value })) }], validateOnly: false }, 1),
    ),
    1,
  );
  expect(r.responses[0]!.errorCode).toBe(0);
}
