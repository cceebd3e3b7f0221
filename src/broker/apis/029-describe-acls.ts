/**
 * DescribeAcls (key 29), v1-3.
 *
 * Behavior: a filter with an UNKNOWN element does not parse (Kafka's DescribeAclsRequest refuses
 * it as it is read): the connection is closed. Without an authorizer (`authorizer.class.name`
 * unset) SECURITY_DISABLED, as Kafka's AclApis.handleDescribeAcls answers when it has none. With
 * one, the stored bindings matching the filter (Kafka's filter rules: ANY / MATCH / LITERAL /
 * PREFIXED, null = any), grouped by resource pattern.
 *
 * Version notes: v1 adds pattern types (v0 was removed in Kafka 4); v2+ flexible.
 */
import { DecodeError } from '../../protocol/decode-error.js';
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDescribeAclsRequest, type DescribeAclsRequest } from '../../protocol/generated/messages/describe-acls-request.js';
import { encodeDescribeAclsResponse, type DescribeAclsResponseInput } from '../../protocol/generated/messages/describe-acls-response.js';
import { filterMatches, invalidFilter, type AclFilter } from '../acls.js';
import { hasAuthorizer } from '../authz/install.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';

function filterOf(req: DescribeAclsRequest): AclFilter {
  return {
    resourceType: req.resourceTypeFilter,
    resourceName: req.resourceNameFilter,
    patternType: req.patternTypeFilter,
    principal: req.principalFilter,
    host: req.hostFilter,
    operation: req.operation,
    permissionType: req.permissionType,
  };
}

export function describeAclsHandler(ctx: BrokerContext): ApiHandler<DescribeAclsRequest, DescribeAclsResponseInput> {
  // `authorizer.class.name` is read-only: whether there is an authorizer is fixed for the node's life.
  const enabled = hasAuthorizer(ctx.config);
  return {
    apiKey: 29,
    minVersion: 1,
    maxVersion: 3,
    decode(r, version) {
      const req = decodeDescribeAclsRequest(r, version);
      const bad = invalidFilter(filterOf(req));
      if (bad) throw new DecodeError(`DescribeAcls: ${bad}`);
      return req;
    },
    encode: encodeDescribeAclsResponse,
    handle(_rc, req) {
      if (!enabled) return { throttleTimeMs: 0, errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No Authorizer is configured on the broker', resources: [] };
      const filter = filterOf(req);
      const byResource = new Map<string, { resourceType: number; resourceName: string; patternType: number; acls: { principal: string; host: string; operation: number; permissionType: number }[] }>();
      for (const b of ctx.image.acls.values()) {
        if (!filterMatches(filter, b)) continue;
        const k = `${b.resourceType}\u0000${b.patternType}\u0000${b.resourceName}`;
        let r = byResource.get(k);
        if (!r) byResource.set(k, (r = { resourceType: b.resourceType, resourceName: b.resourceName, patternType: b.patternType, acls: [] }));
        r.acls.push({ principal: b.principal, host: b.host, operation: b.operation, permissionType: b.permissionType });
      }
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: '', resources: [...byResource.values()] };
    },
  };
}
