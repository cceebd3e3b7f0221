/**
 * Kafka's bound on one administrative request (QuorumController's MAX_RECORDS_PER_USER_OP): the
 * metadata records it would write — for CreateTopics a topic record, one per partition and one
 * per config; for CreatePartitions one per new partition — may number at most 10,000. Past it,
 * every topic of the request is refused with POLICY_VIOLATION and this message, validate-only
 * requests included, before anything is written. CreateTopics counts only the topics that pass
 * their own checks, as Kafka appends a topic's records only once it has passed them.
 */
export const MAX_RECORDS_PER_USER_OP = 10_000;

export const EXCESSIVE_BATCH_MESSAGE = 'Unable to perform excessively large batch operation.';
