/**
 * DeleteAcls (key 31), v1-3.
 *
 * Behavior: a request with a filter with an UNKNOWN element does not parse (Kafka's
 * DeleteAclsRequest refuses it as it is read): the connection is closed. Without an authorizer
 * (`authorizer.class.name` unset) every filter is answered SECURITY_DISABLED with no matching
 * ACLs and nothing is removed, as Kafka's AclApis.handleDeleteAcls does. With one, a filter with
 * a code no enum has gets INVALID_REQUEST ("Unknown patternFilter." / "Unknown entryFilter.", as
 * Kafka's AclControlManager answers); per other filter, the matching bindings are returned and removed with RemoveAccessControlEntryRecords (one
 * metadata write for the whole request).
 */
import { DecodeError } from '../../protocol/decode-error.js';
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDeleteAclsRequest, type DeleteAclsRequest } from '../../protocol/generated/messages/delete-acls-request.js';
import { encodeDeleteAclsResponse, type DeleteAclsResponseInput } from '../../protocol/generated/messages/delete-acls-response.js';
import { filterMatches, invalidFilter, unknownDeleteFilter, type AclFilter } from '../acls.js';
import { hasAuthorizer } from '../authz/install.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { MetadataRecord } from '../../controller/metadata-records.js';

function filterOf(f: DeleteAclsRequest['filters'][number]): AclFilter {
  return {
    resourceType: f.resourceTypeFilter,
    resourceName: f.resourceNameFilter,
    patternType: f.patternTypeFilter,
    principal: f.principalFilter,
    host: f.hostFilter,
    operation: f.operation,
    permissionType: f.permissionType,
  };
}

export function deleteAclsHandler(ctx: BrokerContext): ApiHandler<DeleteAclsRequest, DeleteAclsResponseInput> {
  // `authorizer.class.name` is read-only: whether there is an authorizer is fixed for the node's life.
  const enabled = hasAuthorizer(ctx.config);
  return {
    apiKey: 31,
    minVersion: 1,
    maxVersion: 3,
    decode(r, version) {
      const req = decodeDeleteAclsRequest(r, version);
      for (const f of req.filters) {
        const bad = invalidFilter(filterOf(f));
        if (bad) throw new DecodeError(`DeleteAcls: ${bad}`);
      }
      return req;
    },
    encode: encodeDeleteAclsResponse,
    async handle(_rc, req) {
      if (!enabled) return { throttleTimeMs: 0, filterResults: req.filters.map(() => ({ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No Authorizer is configured.', matchingAcls: [] })) };
      type FilterResult = NonNullable<DeleteAclsResponseInput['filterResults']>[number];
      const filterResults: FilterResult[] = [];
      await ctx.controller.write((img) => {
        const recs: MetadataRecord[] = [];
        const removed = new Set<string>();
        for (const f of req.filters) {
          const filter = filterOf(f);
          const unknown = unknownDeleteFilter(filter);
          if (unknown) {
            filterResults.push({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: unknown, matchingAcls: [] });
            continue;
          }
          const matching: NonNullable<FilterResult['matchingAcls']>[number][] = [];
          for (const b of img.acls.values()) {
            if (!filterMatches(filter, b)) continue;
            const { id: _id, ...binding } = b;
            matching.push({ errorCode: 0, errorMessage: null, ...binding });
            if (!removed.has(b.id)) {
              removed.add(b.id);
              recs.push({ type: 'removeAcl', id: b.id });
            }
          }
          filterResults.push({ errorCode: ErrorCode.NONE, errorMessage: null, matchingAcls: matching });
        }
        return recs;
      });
      return { throttleTimeMs: 0, filterResults };
    },
  };
}
