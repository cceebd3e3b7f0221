/**
 * DescribeUserScramCredentials (key 50), v0.
 *
 * Behavior: the mechanisms and iteration counts stored for each user (null list = every user
 * with a credential); a named user without credentials → RESOURCE_NOT_FOUND, a user named twice
 * → DUPLICATE_RESOURCE (Kafka's ScramControlManager). Salts and keys are never returned.
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeDescribeUserScramCredentialsRequest, type DescribeUserScramCredentialsRequest } from '../../protocol/generated/messages/describe-user-scram-credentials-request.js';
import {
  encodeDescribeUserScramCredentialsResponse,
  type DescribeUserScramCredentialsResponseInput,
} from '../../protocol/generated/messages/describe-user-scram-credentials-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';

export function describeUserScramCredentialsHandler(ctx: BrokerContext): ApiHandler<DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponseInput> {
  return {
    apiKey: 50,
    minVersion: 0,
    maxVersion: 0,
    decode: decodeDescribeUserScramCredentialsRequest,
    encode: encodeDescribeUserScramCredentialsResponse,
    handle(_rc, req) {
      const names = req.users === null ? [...ctx.image.scram.keys()] : req.users.map((u) => u.name);
      const counts = new Map<string, number>();
      for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
      const seen = new Set<string>();
      const results: NonNullable<DescribeUserScramCredentialsResponseInput['results']>[number][] = [];
      for (const user of names) {
        if (seen.has(user)) continue;
        seen.add(user);
        if ((counts.get(user) ?? 0) > 1) {
          results.push({ user, errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: `Cannot describe SCRAM credentials for the same user twice in a single request: ${user}`, credentialInfos: [] });
          continue;
        }
        const creds = ctx.image.scram.get(user);
        if (!creds) {
          results.push({ user, errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: `Attempt to describe a user credential that does not exist: ${user}`, credentialInfos: [] });
          continue;
        }
        results.push({ user, errorCode: ErrorCode.NONE, errorMessage: null, credentialInfos: [...creds.values()].map((c) => ({ mechanism: c.mechanism, iterations: c.iterations })) });
      }
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, results };
    },
  };
}
