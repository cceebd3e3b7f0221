/**
 * CreateAcls (key 30), v1-3.
 *
 * Behavior: each binding is validated like Kafka's AclControlManager (INVALID_REQUEST with the
 * reason); valid ones are stored as AccessControlEntryRecords in one metadata write; a binding
 * that already exists is not stored twice. Not enforced (see acls.ts).
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeCreateAclsRequest, type CreateAclsRequest } from '../../protocol/generated/messages/create-acls-request.js';
import { encodeCreateAclsResponse, type CreateAclsResponseInput } from '../../protocol/generated/messages/create-acls-response.js';
import { invalidBinding, sameBinding, type AclBinding } from '../acls.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { MetadataRecord } from '../../controller/metadata-records.js';

export function createAclsHandler(ctx: BrokerContext): ApiHandler<CreateAclsRequest, CreateAclsResponseInput> {
  return {
    apiKey: 30,
    minVersion: 1,
    maxVersion: 3,
    decode: decodeCreateAclsRequest,
    encode: encodeCreateAclsResponse,
    async handle(_rc, req) {
      const results: { errorCode: number; errorMessage: string | null }[] = [];
      let failure: { errorCode: number; errorMessage: string | null } | null = null;
      const res = await ctx.controller.write((img) => {
        const recs: MetadataRecord[] = [];
        const pending: AclBinding[] = [];
        for (const c of req.creations) {
          const b: AclBinding = {
            resourceType: c.resourceType,
            resourceName: c.resourceName,
            patternType: c.resourcePatternType,
            principal: c.principal,
            host: c.host,
            operation: c.operation,
            permissionType: c.permissionType,
          };
          const bad = invalidBinding(b);
          if (bad) {
            results.push({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: bad });
            continue;
          }
          results.push({ errorCode: ErrorCode.NONE, errorMessage: null });
          if ([...img.acls.values()].some((x) => sameBinding(x, b)) || pending.some((x) => sameBinding(x, b))) continue;
          pending.push(b);
          recs.push({ type: 'acl', id: randomUUID(), ...b });
        }
        return recs;
      });
      if (res.errorCode !== 0) failure = { errorCode: res.errorCode, errorMessage: res.errorMessage };
      return { throttleTimeMs: 0, results: failure ? results.map(() => failure!) : results };
    },
  };
}
