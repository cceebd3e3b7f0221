/**
 * DeleteAcls (key 31), v1-3.
 *
 * Behavior: per filter, the matching bindings are returned and removed with
 * RemoveAccessControlEntryRecords (one metadata write for the whole request); a filter with an
 * UNKNOWN element → INVALID_REQUEST.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDeleteAclsRequest, type DeleteAclsRequest } from '../../protocol/generated/messages/delete-acls-request.js';
import { encodeDeleteAclsResponse, type DeleteAclsResponseInput } from '../../protocol/generated/messages/delete-acls-response.js';
import { filterMatches, invalidFilter, type AclFilter } from '../acls.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { MetadataRecord } from '../../controller/metadata-records.js';

export function deleteAclsHandler(ctx: BrokerContext): ApiHandler<DeleteAclsRequest, DeleteAclsResponseInput> {
  return {
    apiKey: 31,
    minVersion: 1,
    maxVersion: 3,
    decode: decodeDeleteAclsRequest,
    encode: encodeDeleteAclsResponse,
    async handle(_rc, req) {
      type FilterResult = NonNullable<DeleteAclsResponseInput['filterResults']>[number];
      const filterResults: FilterResult[] = [];
      await ctx.controller.write((img) => {
        const recs: MetadataRecord[] = [];
        const removed = new Set<string>();
        for (const f of req.filters) {
          const filter: AclFilter = {
            resourceType: f.resourceTypeFilter,
            resourceName: f.resourceNameFilter,
            patternType: f.patternTypeFilter,
            principal: f.principalFilter,
            host: f.hostFilter,
            operation: f.operation,
            permissionType: f.permissionType,
          };
          const bad = invalidFilter(filter);
          if (bad) {
            filterResults.push({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: bad, matchingAcls: [] });
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
