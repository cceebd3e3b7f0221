/**
 * A TCP server that serves the mirroring handlers over the real Kafka wire, built from the
 * broker's own listener (BrokerServer) and API registry, plus the three standard APIs the admin
 * client needs around them (ApiVersions, Metadata, and DescribeConfigs / IncrementalAlterConfigs
 * for the CLUSTER_MIRROR resource). It lets the admin client and the CLI be tested on the wire
 * beside the node that will host the same handlers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiHandler } from '../../../src/server/api-handler.js';
import { ApiRegistry } from '../../../src/server/api-registry.js';
import type { BrokerContext } from '../../../src/broker/broker-context.js';
import { apiVersionsHandler } from '../../../src/broker/apis/018-api-versions.js';
import { createLogger } from '../../../src/common/logger.js';
import { BrokerServer } from '../../../src/server/server.js';
import { createMirrorApiHandlers } from '../../../src/mirror/mirror-api-handlers.js';
import type { MirrorApiHandlers } from '../../../src/mirror/mirror-host.js';
import { ErrorCode } from '../../../src/protocol/generated/errors.js';
import { decodeDescribeConfigsRequest, type DescribeConfigsRequest } from '../../../src/protocol/generated/messages/describe-configs-request.js';
import { encodeDescribeConfigsResponse, type DescribeConfigsResponseInput } from '../../../src/protocol/generated/messages/describe-configs-response.js';
import { decodeIncrementalAlterConfigsRequest, type IncrementalAlterConfigsRequest } from '../../../src/protocol/generated/messages/incremental-alter-configs-request.js';
import { encodeIncrementalAlterConfigsResponse, type IncrementalAlterConfigsResponseInput } from '../../../src/protocol/generated/messages/incremental-alter-configs-response.js';
import { decodeMetadataRequest, type MetadataRequest } from '../../../src/protocol/generated/messages/metadata-request.js';
import { encodeMetadataResponse, type MetadataResponseInput } from '../../../src/protocol/generated/messages/metadata-response.js';
import { MirrorTestHost } from '../../mirror/helpers/mirror-test-host.js';

export interface MirrorTestServer {
  readonly host: MirrorTestHost;
  readonly mirror: MirrorApiHandlers;
  readonly bootstrap: string;
  close(): Promise<void>;
}

export async function startMirrorTestServer(brokerConfig: Record<string, string> = {}): Promise<MirrorTestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-mirror-server-'));
  const host = new MirrorTestHost(dir, brokerConfig);
  const mirror = await createMirrorApiHandlers(host);
  const registry = new ApiRegistry();
  let port = 0;
  // ApiVersions reads only the registry and, for its features, whether the node is distributed and the metadata offset.
  registry.register(apiVersionsHandler({ registry, cluster: { distributed: false }, image: { offset: 0 } } as unknown as BrokerContext) as ApiHandler);
  const metadata: ApiHandler<MetadataRequest, MetadataResponseInput> = {
    apiKey: 3,
    minVersion: 12,
    maxVersion: 12,
    decode: decodeMetadataRequest,
    encode: encodeMetadataResponse,
    handle: (_ctx, req) => {
      const names = req.topics === null ? host.topicNames() : req.topics.map((t) => t.name ?? '');
      return {
        throttleTimeMs: 0,
        brokers: [{ nodeId: 1, host: '127.0.0.1', port, rack: null }],
        clusterId: host.clusterId,
        controllerId: 1,
        topics: names.map((name) => {
          const n = host.partitionCount(name);
          return {
            errorCode: n === undefined ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : 0,
            name,
            topicId: host.topicIdByName(name) ?? '00000000-0000-0000-0000-000000000000',
            isInternal: false,
            partitions: Array.from({ length: n ?? 0 }, (_, p) => ({ errorCode: 0, partitionIndex: p, leaderId: 1, leaderEpoch: host.leaderEpoch(name, p) ?? 0, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] })),
            topicAuthorizedOperations: -2147483648,
          };
        }),
      };
    },
  };
  const describeConfigs: ApiHandler<DescribeConfigsRequest, DescribeConfigsResponseInput> = {
    apiKey: 32,
    minVersion: 4,
    maxVersion: 4,
    decode: decodeDescribeConfigsRequest,
    encode: encodeDescribeConfigsResponse,
    handle: (_ctx, req) => ({
      throttleTimeMs: 0,
      results: req.resources.map((r) => {
        const entries = r.resourceType === 64 ? mirror.describeMirrorConfig(r.resourceName) : null;
        return {
          errorCode: entries === null ? ErrorCode.UNKNOWN_CLUSTER_MIRROR : 0,
          errorMessage: null,
          resourceType: r.resourceType,
          resourceName: r.resourceName,
          configs: (entries ?? []).map((e) => ({ name: e.name, value: e.value, readOnly: false, configSource: e.isDefault ? 5 : 1, isSensitive: e.isSensitive, synonyms: [], configType: 0, documentation: null })),
        };
      }),
    }),
  };
  const alterConfigs: ApiHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponseInput> = {
    apiKey: 44,
    minVersion: 1,
    maxVersion: 1,
    decode: decodeIncrementalAlterConfigsRequest,
    encode: encodeIncrementalAlterConfigsResponse,
    handle: async (_ctx, req) => ({
      throttleTimeMs: 0,
      responses: await Promise.all(
        req.resources.map(async (r) => {
          const res = await mirror.alterMirrorConfig(r.resourceName, r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })), req.validateOnly);
          return { errorCode: res.errorCode, errorMessage: res.errorMessage, resourceType: r.resourceType, resourceName: r.resourceName };
        }),
      ),
    }),
  };
  registry.registerAll([metadata, describeConfigs, alterConfigs] as ApiHandler[]);
  registry.registerAll(mirror.handlers);
  const server = new BrokerServer({
    host: '127.0.0.1',
    port: 0,
    handlers: registry.handlers,
    headers: registry.headers,
    maxFrameBytes: 100 * 1024 * 1024,
    idleTimeoutMs: 600_000,
    maxInFlight: 100,
    log: createLogger({}, 'error', () => undefined),
    unsupportedApiVersionsBody: () => registry.unsupportedApiVersionsBody(),
  });
  port = await server.listen();
  return {
    host,
    mirror,
    bootstrap: `127.0.0.1:${port}`,
    async close() {
      await mirror.close();
      await server.close();
      await host.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
