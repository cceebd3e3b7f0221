/**
 * ACL bindings as Kafka's StandardAuthorizer stores them (AccessControlEntryRecords in the
 * metadata log), with Kafka's validation of new bindings and its filter matching
 * (AclBindingFilter / ResourcePatternFilter). They are enforced when `authorizer.class.name`
 * switches the authorizer on (src/auth/authorizer.ts, src/broker/authz/).
 */
import { AclOperation, AclPermission, PatternType, ResourceType, WILDCARD } from '../auth/acl-model.js';
import type { AclEntry } from '../controller/metadata-records.js';

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

/** Why a new binding is refused (Kafka's AclControlManager.validateNewAcl), or null. */
export function invalidBinding(b: AclBinding): string | null {
  if (b.resourceType <= ResourceType.ANY || b.resourceType > ResourceType.CLUSTER_MIRROR) return `Invalid resourceType ${b.resourceType}`;
  if (b.patternType !== PatternType.LITERAL && b.patternType !== PatternType.PREFIXED) return `Invalid patternType ${b.patternType}`;
  if (b.operation <= AclOperation.ANY || b.operation > AclOperation.DESCRIBE_TOKENS) return `Invalid operation ${b.operation}`;
  if (b.permissionType !== AclPermission.ALLOW && b.permissionType !== AclPermission.DENY) return `Invalid permissionType ${b.permissionType}`;
  if (b.resourceName.length === 0) return 'Resource name should not be empty';
  if (b.resourceType === ResourceType.CLUSTER && b.resourceName !== 'kafka-cluster') return 'The only valid name for the CLUSTER resource is kafka-cluster';
  if (!/^[^:]+:.*$/.test(b.principal)) return `Could not parse principal from \`${b.principal}\` (no colon is present separating the principal type from the principal name)`;
  return null;
}

/** Why a filter cannot be used (Kafka rejects UNKNOWN values in filters), or null. */
export function invalidFilter(f: AclFilter): string | null {
  if (f.resourceType === ResourceType.UNKNOWN || f.patternType === PatternType.UNKNOWN || f.operation === AclOperation.UNKNOWN || f.permissionType === AclPermission.UNKNOWN) {
    return 'The filter contains an UNKNOWN element';
  }
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
