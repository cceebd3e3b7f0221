/**
 * AlterClientQuotas (key 49), v0-1.
 *
 * Behavior (Kafka's ClientQuotaControlManager): entity types user, client-id and ip (ip not
 * combined with the others, a type at most once), keys producer_byte_rate, consumer_byte_rate,
 * request_percentage, controller_mutation_rate for user/client-id and connection_creation_rate
 * for ip; byte rates must be whole numbers and values positive. Accepted operations become
 * ClientQuotaRecords (remove = true deletes a key); ValidateOnly writes nothing. One result per
 * entry. The node enforces them at once (src/quota reads the image on each recording).
 */
import { ErrorCode } from '../../protocol/generated/errors.js';
import { decodeAlterClientQuotasRequest, type AlterClientQuotasRequest } from '../../protocol/generated/messages/alter-client-quotas-request.js';
import { encodeAlterClientQuotasResponse, type AlterClientQuotasResponseInput } from '../../protocol/generated/messages/alter-client-quotas-response.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { MetadataRecord } from '../../controller/metadata-records.js';

export const QUOTA_ENTITY_TYPES: ReadonlySet<string> = new Set(['user', 'client-id', 'ip']);
const CLIENT_KEYS: ReadonlyMap<string, 'long' | 'double'> = new Map([
  ['producer_byte_rate', 'long'],
  ['consumer_byte_rate', 'long'],
  ['request_percentage', 'double'],
  ['controller_mutation_rate', 'double'],
]);
const IP_KEYS: ReadonlyMap<string, 'long' | 'double'> = new Map([['connection_creation_rate', 'long']]);

function entityError(entity: readonly { entityType: string; entityName: string | null }[]): string | null {
  if (entity.length === 0) return 'Invalid empty client quota entity';
  const types = entity.map((e) => e.entityType);
  if (new Set(types).size !== types.length) return 'Entity types must not repeat';
  for (const t of types) if (!QUOTA_ENTITY_TYPES.has(t)) return `Unhandled client quota entity type: ${t}`;
  if (types.includes('ip') && types.length > 1) return 'Invalid quota entity combination, IP entity should not be combined with User or ClientId';
  return null;
}

export function alterClientQuotasHandler(ctx: BrokerContext): ApiHandler<AlterClientQuotasRequest, AlterClientQuotasResponseInput> {
  return {
    apiKey: 49,
    minVersion: 0,
    maxVersion: 1,
    decode: decodeAlterClientQuotasRequest,
    encode: encodeAlterClientQuotasResponse,
    async handle(_rc, req) {
      const results: { errorCode: number; errorMessage: string | null; entity: { entityType: string; entityName: string | null }[] }[] = [];
      const recs: MetadataRecord[] = [];
      for (const e of req.entries) {
        const entity = e.entity.map((x) => ({ entityType: x.entityType, entityName: x.entityName }));
        let err = entityError(entity);
        const keys = entity.some((x) => x.entityType === 'ip') ? IP_KEYS : CLIENT_KEYS;
        for (const op of e.ops) {
          if (err) break;
          const kind = keys.get(op.key);
          if (!kind) err = `Unknown quota key ${op.key} for this entity`;
          else if (!op.remove && (!(op.value > 0) || !Number.isFinite(op.value))) err = `Quota ${op.key} must be positive, got ${op.value}`;
          else if (!op.remove && kind === 'long' && !Number.isInteger(op.value)) err = `Quota ${op.key} must be a whole number, got ${op.value}`;
        }
        if (new Set(e.ops.map((o) => o.key)).size !== e.ops.length) err ??= 'A quota key may be altered only once per entity';
        if (err) {
          results.push({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: err, entity });
          continue;
        }
        results.push({ errorCode: ErrorCode.NONE, errorMessage: null, entity });
        for (const op of e.ops) recs.push({ type: 'quota', entity, key: op.key, value: op.remove ? 0 : op.value, remove: op.remove });
      }
      if (!req.validateOnly && recs.length > 0) {
        const r = await ctx.controller.write(() => recs);
        if (r.errorCode !== 0) for (const x of results) if (x.errorCode === 0) Object.assign(x, { errorCode: r.errorCode, errorMessage: r.errorMessage });
      }
      return { throttleTimeMs: 0, entries: results };
    },
  };
}
