/**
 * Kafka's ACL vocabulary as it travels on the wire and in AccessControlEntryRecords: the codes of
 * org.apache.kafka.common.resource.ResourceType / PatternType and
 * org.apache.kafka.common.acl.AclOperation / AclPermissionType. CLUSTER_MIRROR (8) is KIP-1279's
 * resource type for cluster mirrors.
 */
export const ResourceType = { UNKNOWN: 0, ANY: 1, TOPIC: 2, GROUP: 3, CLUSTER: 4, TRANSACTIONAL_ID: 5, DELEGATION_TOKEN: 6, USER: 7, CLUSTER_MIRROR: 8 } as const;
export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;
export const AclOperation = { UNKNOWN: 0, ANY: 1, ALL: 2, READ: 3, WRITE: 4, CREATE: 5, DELETE: 6, ALTER: 7, DESCRIBE: 8, CLUSTER_ACTION: 9, DESCRIBE_CONFIGS: 10, ALTER_CONFIGS: 11, IDEMPOTENT_WRITE: 12, CREATE_TOKENS: 13, DESCRIBE_TOKENS: 14 } as const;
export const AclPermission = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;

/** One ACL binding (Kafka's AccessControlEntryRecord fields). */
export interface AclEntry {
  readonly id: string;
  readonly resourceType: number;
  readonly resourceName: string;
  readonly patternType: number;
  readonly principal: string;
  readonly host: string;
  readonly operation: number;
  readonly permissionType: number;
}

/** The literal resource name (and principal name, and host) that matches every name. */
export const WILDCARD = '*';
export const WILDCARD_PRINCIPAL = 'User:*';
/** The only name of the CLUSTER resource (Kafka's Resource.CLUSTER_NAME). */
export const CLUSTER_NAME = 'kafka-cluster';

/** One stored binding, as the authorizer reads it: an AccessControlEntryRecord without its id. */
export type StandardAcl = Omit<AclEntry, 'id'>;

/**
 * The operations each resource type supports, in the order Kafka's authorized-operations bit
 * sets list them (AclEntry.supportedOperations): used for `*_authorized_operations` answers.
 */
export const SUPPORTED_OPERATIONS: ReadonlyMap<number, readonly number[]> = new Map([
  [ResourceType.TOPIC, [AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS]],
  [ResourceType.GROUP, [AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS]],
  [
    ResourceType.CLUSTER,
    [AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER, AclOperation.DESCRIBE],
  ],
  [ResourceType.TRANSACTIONAL_ID, [AclOperation.DESCRIBE, AclOperation.WRITE]],
  [ResourceType.DELEGATION_TOKEN, [AclOperation.DESCRIBE]],
  [ResourceType.USER, [AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS]],
  [ResourceType.CLUSTER_MIRROR, [AclOperation.CREATE, AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.ALTER_CONFIGS, AclOperation.DESCRIBE_CONFIGS]],
]);

/** Kafka's Utils.to32BitField: bit `op` set for each operation. */
export function operationsBitField(ops: Iterable<number>): number {
  let bits = 0;
  for (const op of ops) bits |= 1 << op;
  return bits;
}

/** The value of `*_authorized_operations` when the client did not ask for them. */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;
