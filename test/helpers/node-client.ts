/**
 * Requests to one chosen node of a test cluster (test/helpers/cluster.ts), as the node-by-node
 * tests send them: a client bootstrapped on that node alone, closed after, and the two
 * reassignment APIs the client's registry does not carry.
 */
import { Apis, type ApiSpec } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { encodeAlterPartitionReassignmentsRequest, type AlterPartitionReassignmentsRequestInput } from '../../src/protocol/generated/messages/alter-partition-reassignments-request.js';
import { decodeAlterPartitionReassignmentsResponse, type AlterPartitionReassignmentsResponse } from '../../src/protocol/generated/messages/alter-partition-reassignments-response.js';
import { encodeListPartitionReassignmentsRequest, type ListPartitionReassignmentsRequestInput } from '../../src/protocol/generated/messages/list-partition-reassignments-request.js';
import { decodeListPartitionReassignmentsResponse, type ListPartitionReassignmentsResponse } from '../../src/protocol/generated/messages/list-partition-reassignments-response.js';
import type { MetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import type { RunningCluster } from './cluster.js';

export const AlterReassignments: ApiSpec<AlterPartitionReassignmentsRequestInput, AlterPartitionReassignmentsResponse> = { apiKey: 45, versions: [1, 1], encode: encodeAlterPartitionReassignmentsRequest, decode: decodeAlterPartitionReassignmentsResponse };
export const ListReassignments: ApiSpec<ListPartitionReassignmentsRequestInput, ListPartitionReassignmentsResponse> = { apiKey: 46, versions: [0, 0], encode: encodeListPartitionReassignmentsRequest, decode: decodeListPartitionReassignmentsResponse };

const ZERO = '00000000-0000-0000-0000-000000000000';

/** `fn` with a client of node `nodeId` only (client id `<clientIdPrefix>-<nodeId>`), closed after. */
export async function onNode<T>(cluster: RunningCluster, nodeId: number, clientIdPrefix: string, fn: (c: KafkaClient) => Promise<T>): Promise<T> {
  const c = new KafkaClient({ bootstrapServers: [cluster.node(nodeId).bootstrap], clientId: `${clientIdPrefix}-${nodeId}` });
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}

/** Metadata of one topic as node `nodeId` sees it, never creating the topic. */
export function topicMetadataOn(cluster: RunningCluster, nodeId: number, clientIdPrefix: string, topic: string): Promise<MetadataResponse> {
  return onNode(cluster, nodeId, clientIdPrefix, (c) => c.send(Apis.Metadata, { topics: [{ name: topic, topicId: ZERO }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }));
}
