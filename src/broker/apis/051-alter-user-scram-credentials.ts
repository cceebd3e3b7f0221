/**
 * AlterUserScramCredentials (key 51), v0.
 *
 * Behavior (Kafka's ScramControlManager): mechanisms 1 (SCRAM-SHA-256) and 2 (SCRAM-SHA-512),
 * else UNSUPPORTED_SASL_MECHANISM; iterations in [4096, 16384] and a non-empty user name, else
 * UNACCEPTABLE_CREDENTIAL; a user altered twice in one request → DUPLICATE_RESOURCE; deleting a
 * credential that does not exist → RESOURCE_NOT_FOUND. An upsertion stores the salt, StoredKey =
 * H(HMAC(salted password, "Client Key")) and ServerKey = HMAC(salted password, "Server Key") as a
 * UserScramCredentialRecord; the salted password itself is not kept. One result per user; all
 * accepted changes are one metadata write. (The node has no SASL listener: credentials are
 * stored for admin tools.)
 */
import { createHash, createHmac } from 'node:crypto';
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeAlterUserScramCredentialsRequest, type AlterUserScramCredentialsRequest } from '../../protocol/generated/messages/alter-user-scram-credentials-request.js';
import { encodeAlterUserScramCredentialsResponse, type AlterUserScramCredentialsResponseInput } from '../../protocol/generated/messages/alter-user-scram-credentials-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { MetadataRecord } from '../../controller/metadata-records.js';

const HASH: Readonly<Record<number, string>> = { 1: 'sha256', 2: 'sha512' };
const MIN_ITERATIONS = 4096;
const MAX_ITERATIONS = 16384;

export function alterUserScramCredentialsHandler(ctx: BrokerContext): ApiHandler<AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponseInput> {
  return {
    apiKey: 51,
    minVersion: 0,
    maxVersion: 0,
    decode: decodeAlterUserScramCredentialsRequest,
    encode: encodeAlterUserScramCredentialsResponse,
    async handle(_rc, req) {
      const order: string[] = [];
      const counts = new Map<string, number>();
      for (const n of [...req.deletions.map((d) => d.name), ...req.upsertions.map((u) => u.name)]) {
        if (!counts.has(n)) order.push(n);
        counts.set(n, (counts.get(n) ?? 0) + 1);
      }
      const outcome = new Map<string, { errorCode: number; errorMessage: string | null }>();
      const fail = (user: string, errorCode: number, errorMessage: string): void => {
        if (!outcome.has(user)) outcome.set(user, { errorCode, errorMessage });
      };
      await ctx.controller.write((img) => {
        const recs: MetadataRecord[] = [];
        for (const user of order) {
          if ((counts.get(user) ?? 0) > 1) fail(user, ErrorCode.DUPLICATE_RESOURCE, `A user credential cannot be altered twice in the same request: ${user}`);
        }
        for (const d of req.deletions) {
          if (outcome.has(d.name)) continue;
          if (d.name === '') fail(d.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty');
          else if (HASH[d.mechanism] === undefined) fail(d.name, ErrorCode.UNSUPPORTED_SASL_MECHANISM, `Unknown SCRAM mechanism ${d.mechanism}`);
          else if (!img.scram.get(d.name)?.has(d.mechanism)) fail(d.name, ErrorCode.RESOURCE_NOT_FOUND, `Attempt to delete a user credential that does not exist: ${d.name}`);
          else recs.push({ type: 'removeScram', name: d.name, mechanism: d.mechanism });
        }
        for (const u of req.upsertions) {
          if (outcome.has(u.name)) continue;
          const hash = HASH[u.mechanism];
          if (u.name === '') fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty');
          else if (hash === undefined) fail(u.name, ErrorCode.UNSUPPORTED_SASL_MECHANISM, `Unknown SCRAM mechanism ${u.mechanism}`);
          else if (u.iterations < MIN_ITERATIONS) fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations');
          else if (u.iterations > MAX_ITERATIONS) fail(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations');
          else {
            const clientKey = createHmac(hash, u.saltedPassword).update('Client Key').digest();
            recs.push({
              type: 'scram',
              name: u.name,
              mechanism: u.mechanism,
              salt: Buffer.from(u.salt),
              storedKey: createHash(hash).update(clientKey).digest(),
              serverKey: createHmac(hash, u.saltedPassword).update('Server Key').digest(),
              iterations: u.iterations,
            });
          }
        }
        return recs;
      });
      return { throttleTimeMs: 0, results: order.map((user) => ({ user, ...(outcome.get(user) ?? { errorCode: ErrorCode.NONE, errorMessage: null }) })) };
    },
  };
}
