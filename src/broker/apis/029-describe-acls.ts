/**
 * DescribeAcls (key 29), v1-3.
 *
 * Behavior: the stored bindings matching the filter (Kafka's filter rules: ANY / MATCH /
 * LITERAL / PREFIXED, null = any), grouped by resource pattern; a filter with an UNKNOWN element
 * → INVALID_REQUEST. ACLs are stored for admin tools, not enforced (see acls.ts).
 *
 * Version notes: v1 adds pattern types (v0 was removed in Kafka 4); v2+ flexible.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDescribeAclsRequest, type DescribeAclsRequest } from '../../protocol/generated/messages/describe-acls-request.js';
import { encodeDescribeAclsResponse, type DescribeAclsResponseInput } from '../../protocol/generated/messages/describe-acls-response.js';
import { filterMatches, invalidFilter, type AclFilter } from '../acls.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';

export function describeAclsHandler(ctx: BrokerContext): ApiHandler<DescribeAclsRequest, DescribeAclsResponseInput> {
  return {
    apiKey: 29,
    minVersion: 1,
    maxVersion: 3,
    decode: decodeDescribeAclsRequest,
    encode: encodeDescribeAclsResponse,
    handle(_rc, req) {
      const filter: AclFilter = {
        resourceType: req.resourceTypeFilter,
        resourceName: req.resourceNameFilter,
        patternType: req.patternTypeFilter,
        principal: req.principalFilter,
        host: req.hostFilter,
        operation: req.operation,
        permissionType: req.permissionType,
      };
      const bad = invalidFilter(filter);
      if (bad) return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: bad, resources: [] };
      const byResource = new Map<string, { resourceType: number; resourceName: string; patternType: number; acls: { principal: string; host: string; operation: number; permissionType: number }[] }>();
      for (const b of ctx.image.acls.values()) {
        if (!filterMatches(filter, b)) continue;
        const k = `${b.resourceType}\u0000${b.patternType}\u0000${b.resourceName}`;
        let r = byResource.get(k);
        if (!r) byResource.set(k, (r = { resourceType: b.resourceType, resourceName: b.resourceName, patternType: b.patternType, acls: [] }));
        r.acls.push({ principal: b.principal, host: b.host, operation: b.operation, permissionType: b.permissionType });
      }
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, resources: [...byResource.values()] };
    },
  };
}
