/**
 * The syncs the mirror writes through this node's own listener (topic configs, group and share
 * group offsets, ACLs) run as the node's inter-broker principal. With an authorizer on, that
 * principal needs the rights the calls take, beyond the CLUSTER_ACTION of replication:
 * DESCRIBE_CONFIGS and ALTER_CONFIGS on the mirror topics, READ and DESCRIBE on the groups, READ
 * on the topics, DESCRIBE and ALTER on the cluster for the ACL sync (or a place in `super.users`). A refusal is turned into an error naming what was refused, so a round
 * that cannot write fails visibly (logged as a warning, counted as a sync error) instead of
 * leaving the destination silently behind.
 */
import { ERRORS, ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';

const REFUSALS: ReadonlySet<number> = new Set([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]);

export function isRefusal(code: number): boolean {
  return REFUSALS.has(code);
}

/** Throws when this node refused its own principal `what` (an authorization error code). */
export function throwIfRefusedHere(code: number, what: string): void {
  if (!REFUSALS.has(code)) return;
  throw new KafkaError(code, `this node refused its own principal ${what} (${ERRORS.get(code)?.name ?? code}); grant the inter-broker principal the right or list it in super.users`);
}
