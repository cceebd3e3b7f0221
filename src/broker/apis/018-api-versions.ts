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
 * Version notes: the response header is always v0 (even for the flexible v3+ bodies). No
 * finalized features are reported, so Java/franz-go producers use transactions V1.
 *
 * Share groups (KIP-932): v3+ reports `share.version` supported 0-1 and finalized at 1, as a
 * Kafka 4.2+ cluster with share groups enabled does, beside the share APIs (keys 76-79).
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeApiVersionsRequest, type ApiVersionsRequest } from '../../protocol/generated/messages/api-versions-request.js';
import { encodeApiVersionsResponse, type ApiVersionsResponseInput } from '../../protocol/generated/messages/api-versions-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';

/** KIP-932's feature: level 1 serves ShareGroupHeartbeat, ShareFetch and ShareAcknowledge. */
const SHARE_FEATURE = { name: 'share.version', minVersion: 0, maxVersion: 1, level: 1 } as const;

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
      const share =
        v >= 3
          ? {
              supportedFeatures: [{ name: SHARE_FEATURE.name, minVersion: SHARE_FEATURE.minVersion, maxVersion: SHARE_FEATURE.maxVersion }],
              finalizedFeaturesEpoch: 1n,
              finalizedFeatures: [{ name: SHARE_FEATURE.name, minVersionLevel: SHARE_FEATURE.level, maxVersionLevel: SHARE_FEATURE.level }],
            }
          : {};
      return { errorCode: ErrorCode.NONE, apiKeys, throttleTimeMs: 0, ...share };
    },
  };
}
