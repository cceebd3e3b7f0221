/**
 * CreateAcls (key 30), v1-3.
 *
 * Behavior: a request with a binding with an UNKNOWN element does not parse (Kafka's
 * CreateAclsRequest refuses it as it is read): the connection is closed. Without an authorizer
 * (`authorizer.class.name` unset) every creation is answered SECURITY_DISABLED and nothing is
 * stored, as Kafka's AclApis.handleCreateAcls does. With one, a binding naming ANY (or a MATCH
 * pattern), which Kafka cannot build, gets UNKNOWN_SERVER_ERROR with no message, as Kafka answers;
 * the others are validated like Kafka's AclControlManager (INVALID_REQUEST with the reason, a code
 * no enum has named UNKNOWN); valid ones are stored as
 * AccessControlEntryRecords in one metadata write; a binding that already exists is not stored
 * twice.
 */
import { randomUUID } from 'node:crypto';
import { DecodeError } from '../../protocol/decode-error.js';
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeCreateAclsRequest, type CreateAclsRequest } from '../../protocol/generated/messages/create-acls-request.js';
import { encodeCreateAclsResponse, type CreateAclsResponseInput } from '../../protocol/generated/messages/create-acls-response.js';
import { invalidBinding, invalidFilter, sameBinding, unbuildableBinding, type AclBinding } from '../acls.js';
import { hasAuthorizer } from '../authz/install.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { MetadataRecord } from '../../controller/metadata-records.js';

export function createAclsHandler(ctx: BrokerContext): ApiHandler<CreateAclsRequest, CreateAclsResponseInput> {
  // `authorizer.class.name` is read-only: whether there is an authorizer is fixed for the node's life.
  const enabled = hasAuthorizer(ctx.config);
  return {
    apiKey: 30,
    minVersion: 1,
    maxVersion: 3,
    decode(r, version) {
      const req = decodeCreateAclsRequest(r, version);
      for (const c of req.creations) {
        // Kafka's AclBinding.isUnknown: the same four codes a filter may not leave UNKNOWN.
        const unknown = invalidFilter({ ...c, patternType: c.resourcePatternType });
        if (unknown) throw new DecodeError(`CreateAcls: ${unknown}`);
      }
      return req;
    },
    encode: encodeCreateAclsResponse,
    async handle(_rc, req) {
      if (!enabled) return { throttleTimeMs: 0, results: req.creations.map(() => ({ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No Authorizer is configured.' })) };
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
          if (unbuildableBinding(b)) {
            results.push({ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null });
            continue;
          }
          const bad = invalidBinding(b);
          if (bad) {
            results.push({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: bad });
            continue;
          }
          results.push({ errorCode: ErrorCode.NONE, errorMessage: '' });
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
