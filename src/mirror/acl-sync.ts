/**
 * ACL sync (KIP-1279 spec §10.3): on each metadata refresh of a mirror, every ACL of the source
 * (DescribeAcls with an all-matching filter) that a `mirror.acls.include` rule matches is created
 * on this node when missing, and every ACL of this node that is not in that filtered source set
 * is deleted, except ACLs on CLUSTER_MIRROR resources: those govern the mirror link itself and
 * belong to each cluster. A mirror whose include list is empty is skipped. A source without an
 * authorizer (SECURITY_DISABLED, or no DescribeAcls at all) has no ACLs to sync, and this node
 * without one cannot hold them: either way the round is skipped, this node's ACLs are left as
 * they are, and the result says why (the reference skips a source without an authorizer silently;
 * src/mirror/source-sync.ts logs the reason once instead).
 *
 * Rule syntax of `mirror.acls.include` (a comma-separated list, so a rule cannot contain a comma):
 *   resourceType;resourceName;operation;permissionType;principal
 * - resourceType: TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID, DELEGATION_TOKEN, USER (any case) or *;
 * - resourceName: a regular expression that must match the whole resource name (literal or
 *   prefix pattern alike), or *;
 * - operation: READ, WRITE, ALL, DESCRIBE, ... (Kafka's AclOperation names, any case) or *;
 * - permissionType: ALLOW, DENY or *;
 * - principal: a regular expression that must match the whole principal ("User:alice"), or *.
 * Missing trailing fields mean *, so `*` (the default) keeps everything and `TOPIC;orders-.*`
 * keeps every ACL on a topic whose name starts with "orders-". A rule with an unknown type,
 * operation or permission name, or an invalid regular expression, matches nothing.
 */
import { Apis } from '../client/apis.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import type { KafkaClient } from '../client/kafka-client.js';
import { mirrorConfigValue, splitList } from './mirror-config.js';
import type { MirrorHost } from './mirror-host.js';
import { AclOperation, AclPermission, ResourceType, type AclEntry } from '../auth/acl-model.js';

/** One ACL binding as the Acl RPCs carry it (an AccessControlEntryRecord without its id). */
export type MirrorAclBinding = Omit<AclEntry, 'id'>;

const ANY = ResourceType.ANY;

/** The names a filter may give (every code but UNKNOWN and ANY), upper case. */
function namesOf(codes: Readonly<Record<string, number>>): ReadonlyMap<string, number> {
  return new Map(Object.entries(codes).filter(([name]) => name !== 'UNKNOWN' && name !== 'ANY'));
}

const RESOURCE_TYPES = namesOf(ResourceType);
const OPERATIONS = namesOf(AclOperation);
const PERMISSIONS = namesOf(AclPermission);

type AclRule = (b: MirrorAclBinding) => boolean;

const NEVER: AclRule = () => false;

function codeField(field: string | undefined, names: ReadonlyMap<string, number>): number | null | undefined {
  const f = (field ?? '*').trim();
  if (f === '*' || f === '') return null;
  return names.get(f.toUpperCase());
}

function regexField(field: string | undefined): RegExp | null | undefined {
  const f = (field ?? '*').trim();
  if (f === '*' || f === '') return null;
  try {
    return new RegExp(`^(?:${f})$`);
  } catch {
    return undefined;
  }
}

/** Parses one `mirror.acls.include` rule (syntax in the file comment). */
export function parseAclRule(rule: string): AclRule {
  const [type, name, op, perm, principal, ...rest] = rule.split(';');
  if (rest.length > 0) return NEVER;
  const t = codeField(type, RESOURCE_TYPES);
  const n = regexField(name);
  const o = codeField(op, OPERATIONS);
  const p = codeField(perm, PERMISSIONS);
  const pr = regexField(principal);
  if (t === undefined || n === undefined || o === undefined || p === undefined || pr === undefined) return NEVER;
  return (b) =>
    (t === null || b.resourceType === t) &&
    (n === null || n.test(b.resourceName)) &&
    (o === null || b.operation === o) &&
    (p === null || b.permissionType === p) &&
    (pr === null || pr.test(b.principal));
}

function key(b: MirrorAclBinding): string {
  return JSON.stringify([b.resourceType, b.resourceName, b.patternType, b.principal, b.host, b.operation, b.permissionType]);
}

/** Every ACL of a cluster, or null when it has no authorizer (SECURITY_DISABLED, as Kafka's AclApis answers) or no DescribeAcls. */
export async function describeAllAcls(client: KafkaClient): Promise<MirrorAclBinding[] | null> {
  const res = await client.sendIfSupported(Apis.DescribeAcls, {
    resourceTypeFilter: ANY,
    resourceNameFilter: null,
    patternTypeFilter: ANY,
    principalFilter: null,
    hostFilter: null,
    operation: ANY,
    permissionType: ANY,
  });
  if (res === null || res.errorCode === ErrorCode.SECURITY_DISABLED) return null;
  if (res.errorCode !== 0) throw new KafkaError(res.errorCode, `DescribeAcls failed with error ${res.errorCode}: ${res.errorMessage ?? ''}`);
  const out: MirrorAclBinding[] = [];
  for (const r of res.resources) {
    for (const a of r.acls) {
      out.push({ resourceType: r.resourceType, resourceName: r.resourceName, patternType: r.patternType, principal: a.principal, host: a.host, operation: a.operation, permissionType: a.permissionType });
    }
  }
  return out;
}

/** Why a round did nothing: the include list is empty, or one side has no authorizer. */
export const AclSyncSkip = {
  OFF: 'off',
  SOURCE_SECURITY_DISABLED: 'source-security-disabled',
  DESTINATION_SECURITY_DISABLED: 'destination-security-disabled',
} as const;
export type AclSyncSkip = (typeof AclSyncSkip)[keyof typeof AclSyncSkip];

interface AclSyncResult {
  readonly created: number;
  readonly deleted: number;
  /** Why the round was skipped, null when it ran. */
  readonly skipped: AclSyncSkip | null;
}

/** One ACL sync round for one mirror: `source` is the mirror's source client, `self` a client to this node. */
export async function syncAcls(mirrorName: string, host: Pick<MirrorHost, 'mirrorConfigs'>, source: KafkaClient, self: KafkaClient): Promise<AclSyncResult> {
  const skip = (why: AclSyncSkip): AclSyncResult => ({ created: 0, deleted: 0, skipped: why });
  const cfg = host.mirrorConfigs().get(mirrorName);
  if (cfg === undefined) return skip(AclSyncSkip.OFF);
  const rules = splitList(mirrorConfigValue(cfg, 'mirror.acls.include')).map(parseAclRule);
  if (rules.length === 0) return skip(AclSyncSkip.OFF);
  // The source first: one without an authorizer has nothing to sync, whatever this node has.
  const src = await describeAllAcls(source);
  if (src === null) return skip(AclSyncSkip.SOURCE_SECURITY_DISABLED);
  const local = await describeAllAcls(self);
  if (local === null) return skip(AclSyncSkip.DESTINATION_SECURITY_DISABLED);
  const wanted = new Map<string, MirrorAclBinding>();
  for (const b of src) if (b.resourceType !== ResourceType.CLUSTER_MIRROR && rules.some((r) => r(b))) wanted.set(key(b), b);
  const have = new Map(local.map((b) => [key(b), b]));
  const toCreate = [...wanted.entries()].filter(([k]) => !have.has(k)).map(([, b]) => b);
  const toDelete = [...have.entries()].filter(([k, b]) => !wanted.has(k) && b.resourceType !== ResourceType.CLUSTER_MIRROR).map(([, b]) => b);
  let created = 0;
  let deleted = 0;
  if (toCreate.length > 0) {
    const res = await self.sendIfSupported(Apis.CreateAcls, {
      creations: toCreate.map((b) => ({ resourceType: b.resourceType, resourceName: b.resourceName, resourcePatternType: b.patternType, principal: b.principal, host: b.host, operation: b.operation, permissionType: b.permissionType })),
    });
    created = res?.results.filter((r) => r.errorCode === 0).length ?? 0;
  }
  if (toDelete.length > 0) {
    // Exact filters (the binding's own pattern type, name, principal, host, operation, permission) delete that binding only.
    const res = await self.sendIfSupported(Apis.DeleteAcls, {
      filters: toDelete.map((b) => ({
        resourceTypeFilter: b.resourceType,
        resourceNameFilter: b.resourceName,
        patternTypeFilter: b.patternType,
        principalFilter: b.principal,
        hostFilter: b.host,
        operation: b.operation,
        permissionType: b.permissionType,
      })),
    });
    deleted = res?.filterResults.reduce((n, r) => n + (r.errorCode === 0 ? r.matchingAcls.length : 0), 0) ?? 0;
  }
  return { created, deleted, skipped: null };
}
