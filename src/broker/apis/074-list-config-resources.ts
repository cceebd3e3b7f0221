/**
 * ListConfigResources (key 74), v0-1 (KIP-1142).
 *
 * Behavior: v0 lists client-metrics resources only (none here). v1 lists the resources of the
 * requested types (empty = every type): TOPIC (2) every topic, BROKER (4) this node, and
 * CLUSTER_MIRROR (64) the mirrors with configs; other known types have no resources here. A
 * type Kafka does not know → UNSUPPORTED_VERSION, as Kafka's ConfigHelper answers.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeListConfigResourcesRequest, type ListConfigResourcesRequest } from '../../protocol/generated/messages/list-config-resources-request.js';
import { encodeListConfigResourcesResponse, type ListConfigResourcesResponseInput } from '../../protocol/generated/messages/list-config-resources-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { ConfigResourceType } from '../../protocol/config-resource-type.js';

const KNOWN = new Set([2, 4, 8, 16, 32, 64]);

export function listConfigResourcesHandler(ctx: BrokerContext): ApiHandler<ListConfigResourcesRequest, ListConfigResourcesResponseInput> {
  return {
    apiKey: 74,
    minVersion: 0,
    maxVersion: 1,
    decode: decodeListConfigResourcesRequest,
    encode: encodeListConfigResourcesResponse,
    handle(rc, req) {
      if (rc.apiVersion === 0) return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, configResources: [] };
      const types = req.resourceTypes.length === 0 ? [...KNOWN] : req.resourceTypes;
      if (types.some((t) => !KNOWN.has(t))) return { throttleTimeMs: 0, errorCode: ErrorCode.UNSUPPORTED_VERSION, configResources: [] };
      const out: { resourceName: string; resourceType: number }[] = [];
      for (const t of types) {
        if (t === ConfigResourceType.TOPIC) for (const name of ctx.image.topicsByName.keys()) out.push({ resourceName: name, resourceType: t });
        if (t === ConfigResourceType.BROKER) out.push({ resourceName: String(ctx.nodeId), resourceType: t });
        if (t === ConfigResourceType.GROUP || t === ConfigResourceType.CLUSTER_MIRROR) {
          for (const name of ctx.image.otherConfigs.get(t)?.keys() ?? []) out.push({ resourceName: name, resourceType: t });
        }
      }
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, configResources: out };
    },
  };
}
