/**
 * AlterConfigs (key 33), v0-2: the legacy whole-resource replace.
 *
 * Behavior: the given entries become the resource's complete set of overrides (keys not listed
 * are deleted), exactly like Kafka's legacy AlterConfigs. TOPIC and BROKER (this node id or ""
 * for the cluster default); values are validated; ValidateOnly writes nothing. Every change of
 * one resource is one atomic metadata write.
 */
import { decodeAlterConfigsRequest, type AlterConfigsRequest } from '../../protocol/generated/messages/alter-configs-request.js';
import { encodeAlterConfigsResponse, type AlterConfigsResponseInput } from '../../protocol/generated/messages/alter-configs-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { applyChanges, checkResource, currentEntries } from '../config-alter.js';

export function alterConfigsHandler(ctx: BrokerContext): ApiHandler<AlterConfigsRequest, AlterConfigsResponseInput> {
  return {
    apiKey: 33,
    minVersion: 0,
    maxVersion: 2,
    decode: decodeAlterConfigsRequest,
    encode: encodeAlterConfigsResponse,
    async handle(_rc, req) {
      const responses: NonNullable<AlterConfigsResponseInput['responses']>[number][] = [];
      for (const res of req.resources) {
        const base = { resourceType: res.resourceType, resourceName: res.resourceName };
        const check = checkResource(ctx, res.resourceType, res.resourceName);
        if (check.errorCode !== 0) {
          responses.push({ ...base, ...check });
          continue;
        }
        const wanted = new Map<string, string | null>(res.configs.map((c) => [c.name, c.value]));
        const changes: [string, string | null][] = [...wanted];
        for (const k of currentEntries(ctx, res.resourceType, res.resourceName).keys()) if (!wanted.has(k)) changes.push([k, null]);
        const out = await applyChanges(ctx, res.resourceType, res.resourceName, changes, req.validateOnly);
        responses.push({ ...base, ...out });
      }
      return { throttleTimeMs: 0, responses };
    },
  };
}

