/**
 * IncrementalAlterConfigs (key 44), v0-1.
 *
 * Behavior: per entry SET (0), DELETE (1), APPEND (2) or SUBTRACT (3) — the last two only for
 * list-typed keys (cleanup.policy, ...), else INVALID_CONFIG. A key named twice in one resource is
 * INVALID_REQUEST. TOPIC, BROKER (this node id or "" for the cluster default) and GROUP resources;
 * CLUSTER_MIRROR (64) goes to the mirror module when wired. ValidateOnly writes nothing.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeIncrementalAlterConfigsRequest, type IncrementalAlterConfigsRequest } from '../../protocol/generated/messages/incremental-alter-configs-request.js';
import { encodeIncrementalAlterConfigsResponse, type IncrementalAlterConfigsResponseInput } from '../../protocol/generated/messages/incremental-alter-configs-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { findConfigDef } from '../../config/registry.js';
import { applyChanges, checkResource, currentEntries } from '../config-alter.js';
import { ConfigResourceType } from '../../protocol/config-resource-type.js';

export interface MirrorConfigAlterer {
  alterMirrorConfig(
    mirrorName: string,
    alterations: readonly { name: string; op: number; value: string | null }[],
    validateOnly: boolean,
  ): Promise<{ errorCode: number; errorMessage: string | null }>;
}

const isList = (resourceType: number, name: string): boolean =>
  findConfigDef(resourceType === ConfigResourceType.TOPIC ? 'TOPIC' : 'BROKER', name)?.type === 'list';

export function incrementalAlterConfigsHandler(
  ctx: BrokerContext,
  mirror: () => MirrorConfigAlterer | null,
): ApiHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponseInput> {
  return {
    apiKey: 44,
    minVersion: 0,
    maxVersion: 1,
    decode: decodeIncrementalAlterConfigsRequest,
    encode: encodeIncrementalAlterConfigsResponse,
    async handle(_rc, req) {
      const responses: NonNullable<IncrementalAlterConfigsResponseInput['responses']>[number][] = [];
      for (const res of req.resources) {
        const base = { resourceType: res.resourceType, resourceName: res.resourceName };
        const m = mirror();
        if (res.resourceType === ConfigResourceType.CLUSTER_MIRROR && m) {
          const out = await m.alterMirrorConfig(res.resourceName, res.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })), req.validateOnly);
          responses.push({ ...base, ...out });
          continue;
        }
        const check = checkResource(ctx, res.resourceType, res.resourceName);
        if (check.errorCode !== 0) {
          responses.push({ ...base, ...check });
          continue;
        }
        const names = res.configs.map((c) => c.name);
        if (new Set(names).size !== names.length) {
          responses.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate config keys in one resource.' });
          continue;
        }
        const current = currentEntries(ctx, res.resourceType, res.resourceName);
        const changes: [string, string | null][] = [];
        let failure: { errorCode: number; errorMessage: string } | null = null;
        for (const c of res.configs) {
          switch (c.configOperation) {
            case 0:
              changes.push([c.name, c.value]);
              break;
            case 1:
              changes.push([c.name, null]);
              break;
            case 2:
            case 3: {
              if (!isList(res.resourceType, c.name)) {
                failure = { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: `Config value append/subtract is not allowed for config key ${c.name}` };
                break;
              }
              const effective =
                current.get(c.name) ??
                (res.resourceType === ConfigResourceType.TOPIC ? ctx.configs.describeTopic(res.resourceName).find((d) => d.name === c.name)?.value : ctx.configs.brokerValue(c.name)) ??
                '';
              const items = effective.split(',').map((s) => s.trim()).filter(Boolean);
              const given = (c.value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
              const next = c.configOperation === 2 ? [...items, ...given.filter((g) => !items.includes(g))] : items.filter((i) => !given.includes(i));
              changes.push([c.name, next.join(',')]);
              break;
            }
            default:
              failure = { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unknown config operation ${c.configOperation}` };
          }
          if (failure) break;
        }
        if (failure) {
          responses.push({ ...base, ...failure });
          continue;
        }
        const out = await applyChanges(ctx, res.resourceType, res.resourceName, changes, req.validateOnly);
        responses.push({ ...base, ...out });
      }
      return { throttleTimeMs: 0, responses };
    },
  };
}
