/**
 * DescribeClientQuotas (key 48), v0-1.
 *
 * Behavior: the stored quota entities matching every filter component (entity type with match
 * type 0 EXACT name, 1 DEFAULT entity, 2 ANY name); with Strict, an entity must not have entity
 * types beyond the filter's. Entity types are user, client-id and ip; a component naming another
 * type, or a type twice → INVALID_REQUEST (Kafka's ClientQuotaControlManager). Quotas are
 * stored for admin tools; the node does not throttle.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDescribeClientQuotasRequest, type DescribeClientQuotasRequest } from '../../protocol/generated/messages/describe-client-quotas-request.js';
import { encodeDescribeClientQuotasResponse, type DescribeClientQuotasResponseInput } from '../../protocol/generated/messages/describe-client-quotas-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { QUOTA_ENTITY_TYPES } from './049-alter-client-quotas.js';

export function describeClientQuotasHandler(ctx: BrokerContext): ApiHandler<DescribeClientQuotasRequest, DescribeClientQuotasResponseInput> {
  return {
    apiKey: 48,
    minVersion: 0,
    maxVersion: 1,
    decode: decodeDescribeClientQuotasRequest,
    encode: encodeDescribeClientQuotasResponse,
    handle(_rc, req) {
      const fail = (errorMessage: string): DescribeClientQuotasResponseInput => ({ throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, errorMessage, entries: null });
      const types = new Set<string>();
      for (const c of req.components) {
        if (!QUOTA_ENTITY_TYPES.has(c.entityType)) return fail(`Custom entity type '${c.entityType}' not supported`);
        if (types.has(c.entityType)) return fail(`Entity type ${c.entityType} cannot appear more than once in the filter.`);
        if (c.matchType < 0 || c.matchType > 2) return fail(`Unknown match type ${c.matchType}`);
        if (c.matchType === 0 && c.match === null) return fail('An exact match needs a name');
        types.add(c.entityType);
      }
      const entries: NonNullable<DescribeClientQuotasResponseInput['entries']>[number][] = [];
      for (const q of ctx.image.quotas.values()) {
        const byType = new Map(q.entity.map((e) => [e.entityType, e.entityName]));
        const ok = req.components.every((c) => {
          if (!byType.has(c.entityType)) return false;
          const name = byType.get(c.entityType)!;
          if (c.matchType === 0) return name === c.match;
          if (c.matchType === 1) return name === null;
          return true;
        });
        if (!ok || (req.strict && q.entity.some((e) => !types.has(e.entityType)))) continue;
        entries.push({ entity: q.entity, values: [...q.values].map(([key, value]) => ({ key, value })) });
      }
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, entries };
    },
  };
}
