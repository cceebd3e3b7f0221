/**
 * ACL bindings as Kafka's StandardAuthorizer stores them (AccessControlEntryRecords in the
 * metadata log), with Kafka's validation of new bindings and its filter matching
 * (AclBindingFilter / ResourcePatternFilter). They are enforced when `authorizer.class.name`
 * switches the authorizer on (src/auth/authorizer.ts, src/broker/authz/).
 */
import { AclOperation, AclPermission, PatternType, ResourceType, WILDCARD } from '../auth/acl-model.js';
import type { AclEntry } from '../auth/acl-model.js';

export { AclOperation, AclPermission, PatternType, ResourceType, WILDCARD } from '../auth/acl-model.js';

export type AclBinding = Omit<AclEntry, 'id'>;

export interface AclFilter {
  readonly resourceType: number;
  readonly resourceName: string | null;
  readonly patternType: number;
  readonly principal: string | null;
  readonly host: string | null;
  readonly operation: number;
  readonly permissionType: number;
}

/** An enum code's name, or UNKNOWN for a code the enum has no name for (Kafka's fromCode). */
function nameOf(values: Record<string, number>, code: number): string {
  for (const [name, c] of Object.entries(values)) if (c === code) return name;
  return 'UNKNOWN';
}

function known(values: Record<string, number>, code: number): boolean {
  return nameOf(values, code) !== 'UNKNOWN';
}

/**
 * True when a binding names ANY (or a MATCH pattern): Kafka cannot even build such a binding
 * (its ResourcePattern and AccessControlEntry constructors refuse them), so CreateAcls answers
 * that creation with UNKNOWN_SERVER_ERROR and no message.
 */
export function unbuildableBinding(b: AclBinding): boolean {
  return (
    b.resourceType === ResourceType.ANY ||
    b.patternType === PatternType.ANY ||
    b.patternType === PatternType.MATCH ||
    b.operation === AclOperation.ANY ||
    b.permissionType === AclPermission.ANY
  );
}

/** Why a new binding is refused (Kafka's AclControlManager.validateNewAcl), or null. */
export function invalidBinding(b: AclBinding): string | null {
  if (b.resourceType <= ResourceType.ANY || !known(ResourceType, b.resourceType)) return `Invalid resourceType ${nameOf(ResourceType, b.resourceType)}`;
  if (b.patternType !== PatternType.LITERAL && b.patternType !== PatternType.PREFIXED) return `Invalid patternType ${nameOf(PatternType, b.patternType)}`;
  if (b.operation <= AclOperation.ANY || !known(AclOperation, b.operation)) return `Invalid operation ${nameOf(AclOperation, b.operation)}`;
  if (b.permissionType !== AclPermission.ALLOW && b.permissionType !== AclPermission.DENY) return `Invalid permissionType ${nameOf(AclPermission, b.permissionType)}`;
  if (b.resourceName.length === 0) return 'Resource name should not be empty';
  if (b.resourceType === ResourceType.CLUSTER && b.resourceName !== 'kafka-cluster') return 'The only valid name for the CLUSTER resource is kafka-cluster';
  if (!/^[^:]+:.*$/.test(b.principal)) return `Could not parse principal from \`${b.principal}\` (no colon is present separating the principal type from the principal name)`;
  return null;
}

/**
 * Why a request's filter does not parse (Kafka's request classes refuse the UNKNOWN code 0 as
 * they are read), or null. Codes no enum has pass here; see `unknownDeleteFilter`.
 */
export function invalidFilter(f: AclFilter): string | null {
  if (f.resourceType === ResourceType.UNKNOWN || f.patternType === PatternType.UNKNOWN || f.operation === AclOperation.UNKNOWN || f.permissionType === AclPermission.UNKNOWN) {
    return 'The filter contains an UNKNOWN element';
  }
  return null;
}

/**
 * Why DeleteAcls refuses one filter (Kafka's AclControlManager.validateFilter: a code no enum has
 * reads as UNKNOWN there), or null.
 */
export function unknownDeleteFilter(f: AclFilter): string | null {
  if (!known(ResourceType, f.resourceType) || !known(PatternType, f.patternType)) return 'Unknown patternFilter.';
  if (!known(AclOperation, f.operation) || !known(AclPermission, f.permissionType)) return 'Unknown entryFilter.';
  return null;
}

function patternMatches(f: AclFilter, b: AclBinding): boolean {
  if (f.resourceType !== ResourceType.ANY && f.resourceType !== b.resourceType) return false;
  if (f.patternType === PatternType.ANY) return f.resourceName === null || f.resourceName === b.resourceName;
  if (f.patternType === PatternType.MATCH) {
    if (f.resourceName === null) return true;
    if (b.patternType === PatternType.LITERAL) return b.resourceName === f.resourceName || b.resourceName === WILDCARD;
    return b.patternType === PatternType.PREFIXED && f.resourceName.startsWith(b.resourceName);
  }
  if (f.patternType !== b.patternType) return false;
  return f.resourceName === null || f.resourceName === b.resourceName;
}

export function filterMatches(f: AclFilter, b: AclBinding): boolean {
  return (
    patternMatches(f, b) &&
    (f.principal === null || f.principal === b.principal) &&
    (f.host === null || f.host === b.host) &&
    (f.operation === AclOperation.ANY || f.operation === b.operation) &&
    (f.permissionType === AclPermission.ANY || f.permissionType === b.permissionType)
  );
}

export function sameBinding(a: AclBinding, b: AclBinding): boolean {
  return (
    a.resourceType === b.resourceType &&
    a.resourceName === b.resourceName &&
    a.patternType === b.patternType &&
    a.principal === b.principal &&
    a.host === b.host &&
    a.operation === b.operation &&
    a.permissionType === b.permissionType
  );
}
