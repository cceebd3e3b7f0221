/**
 * ApiVersions (key 18), v0-5.
 *
 * Behavior:
 * - Lists every registered handler's version range (Produce from v0, like Kafka 4: KAFKA-18659).
 * - v3+: ClientSoftwareName/Version must match Kafka's pattern, else INVALID_REQUEST (librdkafka
 *   then retries with v0).
 * - v5 (KIP-1242): ClusterId and NodeId name the node the client means to reach. Only one of
 *   them set is INVALID_REQUEST (ApiVersionsRequest.isValid); both set and either not this
 *   node's is REBOOTSTRAP_REQUIRED (KafkaApis.handleApiVersionsRequest), so a client whose
 *   address now leads to another cluster or node bootstraps again instead of using it.
 * - A too-new version never reaches this handler: the connection answers it with the KIP-511
 *   v0-format UNSUPPORTED_VERSION body (ApiRegistry.unsupportedApiVersionsBody).
 *
 * - v3+: features (KIP-584), see `features` below: transaction.version, share.version,
 *   streams.version and mirror.version.
 *
 * Version notes: the response header is always v0 (even for the flexible v3+ bodies).
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeApiVersionsRequest, type ApiVersionsRequest } from '../../protocol/generated/messages/api-versions-request.js';
import { encodeApiVersionsResponse, type ApiVersionsResponseInput } from '../../protocol/generated/messages/api-versions-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';

/*
 * transaction.version (KIP-890 part 2), finalized at 2 as a Kafka 4.4 cluster is by default, so
 * Java 4.x producers run transactions V2 (EndTxn v5 epoch bumps, Produce v12+ and TxnOffsetCommit
 * v5 adding partitions themselves), on a node alone and on a cluster alike: a partition leader
 * that is not the producer's transaction coordinator adds the partition over AddPartitionsToTxn
 * v4+ (add-partitions-to-txn-manager.ts). The epoch is the metadata offset, as Kafka's is the
 * offset of the last FeatureLevelRecord.
 *
 * share.version (KIP-932), finalized at 1 as a Kafka 4.2+ cluster with share groups enabled is:
 * level 1 serves ShareGroupHeartbeat, ShareFetch and ShareAcknowledge (keys 76-79).
 *
 * streams.version (KIP-1071), finalized at 1 as a Kafka 4.4 cluster is: level 1 serves
 * StreamsGroupHeartbeat and StreamsGroupDescribe (keys 88-89), which Kafka Streams needs for
 * group.protocol=streams.
 *
 * mirror.version (KIP-1279), finalized at 1: level 1 enables cluster mirroring, whose RPCs
 * (keys 95-106) every Fjord node serves. A KIP-1279 client reads the level to know it may use them.
 */
function features(ctx: BrokerContext): Pick<ApiVersionsResponseInput, 'supportedFeatures' | 'finalizedFeaturesEpoch' | 'finalizedFeatures'> {
  const finalizedFeatures = [
    { name: 'share.version', minVersionLevel: 1, maxVersionLevel: 1 },
    { name: 'transaction.version', minVersionLevel: 2, maxVersionLevel: 2 },
    { name: 'streams.version', minVersionLevel: 1, maxVersionLevel: 1 },
    { name: 'mirror.version', minVersionLevel: 1, maxVersionLevel: 1 },
  ];
  return {
    supportedFeatures: [
      { name: 'transaction.version', minVersion: 0, maxVersion: 2 },
      { name: 'share.version', minVersion: 0, maxVersion: 1 },
      { name: 'streams.version', minVersion: 0, maxVersion: 1 },
      { name: 'mirror.version', minVersion: 0, maxVersion: 1 },
    ],
    finalizedFeaturesEpoch: BigInt(Math.max(0, ctx.image.offset)),
    finalizedFeatures,
  };
}

const SOFTWARE_RE = /^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$/;

export function apiVersionsHandler(ctx: BrokerContext): ApiHandler<ApiVersionsRequest, ApiVersionsResponseInput> {
  return {
    apiKey: 18,
    minVersion: 0,
    maxVersion: 5,
    decode: decodeApiVersionsRequest,
    encode: encodeApiVersionsResponse,
    handle(rc, req) {
      const apiKeys = ctx.registry.advertised().map((a) => ({ apiKey: a.apiKey, minVersion: a.minVersion, maxVersion: a.maxVersion }));
      const v = rc.apiVersion;
      const fail = (errorCode: number): ApiVersionsResponseInput => ({ errorCode, apiKeys: [], throttleTimeMs: 0 });
      if (v >= 5 && (req.clusterId === null) !== (req.nodeId === -1)) return fail(ErrorCode.INVALID_REQUEST);
      if (v >= 3 && (!SOFTWARE_RE.test(req.clientSoftwareName) || !SOFTWARE_RE.test(req.clientSoftwareVersion))) {
        return fail(ErrorCode.INVALID_REQUEST);
      }
      if (v >= 5 && req.clusterId !== null && (req.clusterId !== ctx.clusterId || req.nodeId !== ctx.nodeId)) {
        return fail(ErrorCode.REBOOTSTRAP_REQUIRED);
      }
      return { errorCode: ErrorCode.NONE, apiKeys, throttleTimeMs: 0, ...(v >= 3 ? features(ctx) : {}) };
    },
  };
}
