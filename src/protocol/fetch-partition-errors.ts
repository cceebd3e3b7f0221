/**
 * What a partition's error code in a Fetch or OffsetsForLeaderEpoch answer means to a fetcher:
 * one table for the replica follower (src/replication/replica-fetcher.ts) and the mirror fetcher
 * (src/fetcher/partition-errors.ts), as AbstractFetcherThread.processFetchRequest has one for
 * every fetcher thread. An error touches its own partition only, never the others of the answer.
 *
 *   kind           codes                         follower                  mirror
 *   out-of-range   OFFSET_OUT_OF_RANGE           restart at the leader's   restart at the source's
 *                                                log start, or cut to its  log start, or cut to its
 *                                                high watermark (both as   end (both from
 *                                                the Fetch answer says)    ListOffsets)
 *   leader         not this leader, or not now   back off; the next        re-home to the leader the
 *                  (see LEADER below)            metadata image moves it   answer names, else back
 *                                                                          off and refresh metadata
 *   topic          UNKNOWN_TOPIC_OR_PARTITION,   back off                  back off and refresh
 *                  UNKNOWN_TOPIC_ID,                                       metadata (which tells a
 *                  INCONSISTENT_TOPIC_ID                                   deleted or recreated topic
 *                                                                          apart, KIP-1279 §8.10)
 *   auth           authentication and            back off, logged          fail the partition now,
 *                  authorization failures                                  the code in its reason
 *   other          anything else                 back off, logged          fail the partition (its
 *                                                                          state machine retries)
 *
 * Beyond where each learns the leader's log bounds (and re-homing, which uses the answer's
 * CurrentLeader), the two differ only in the last two rows. A follower backs off on every error,
 * as Kafka's ReplicaFetcherThread does: it stays a replica until the controller moves the
 * partition, and has nobody to report to. A mirror partition has a state (KIP-1279 §9) that
 * describe shows: failing it puts the reason there, and waiting for a refused login or a missing
 * ACL to pass would only hide it (Kafka's clients treat AuthenticationException and
 * AuthorizationException as fatal, not retriable).
 */
import { ErrorCode } from './generated/errors.js';

export type FetchErrorKind = 'none' | 'out-of-range' | 'leader' | 'topic' | 'auth' | 'other';

/** "Not this leader, or not now": Kafka's fetcher retries them after a backoff. */
const LEADER: ReadonlySet<number> = new Set([
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.OFFSET_NOT_AVAILABLE,
  ErrorCode.NOT_ENOUGH_REPLICAS,
]);

/** Transient while a topic is created or deleted (Kafka's fetcher warns and backs off). */
const TOPIC: ReadonlySet<number> = new Set([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_ID, ErrorCode.INCONSISTENT_TOPIC_ID]);

/** The leader refused who we are or what we may do. */
const AUTH: ReadonlySet<number> = new Set([
  ErrorCode.SASL_AUTHENTICATION_FAILED,
  ErrorCode.UNSUPPORTED_SASL_MECHANISM,
  ErrorCode.ILLEGAL_SASL_STATE,
  ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
  ErrorCode.GROUP_AUTHORIZATION_FAILED,
  ErrorCode.CLUSTER_MIRROR_AUTHORIZATION_FAILED,
]);

/** The row of the table a partition error code falls in. */
export function fetchErrorKind(code: number): FetchErrorKind {
  if (code === ErrorCode.NONE) return 'none';
  if (code === ErrorCode.OFFSET_OUT_OF_RANGE) return 'out-of-range';
  if (LEADER.has(code)) return 'leader';
  if (TOPIC.has(code)) return 'topic';
  if (AUTH.has(code)) return 'auth';
  return 'other';
}
