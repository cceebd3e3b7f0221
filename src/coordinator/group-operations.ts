/**
 * The operations a principal may perform on a group, as an ACL-operation bitfield (Kafka's
 * AclOperation codes): READ (3), DELETE (6), DESCRIBE (8), DESCRIBE_CONFIGS (10),
 * ALTER_CONFIGS (11). The node has no authorizer for groups, so every caller gets them all.
 */
export const GROUP_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11);
