/**
 * Kafka's bound on one administrative request (QuorumController's MAX_RECORDS_PER_USER_OP): the
 * metadata records it would write — for CreateTopics a topic record, one per partition and one
 * per config; for CreatePartitions one per new partition — may number at most 10,000, validate-only
 * requests included, and only the topics that pass their own checks count, as Kafka appends a
 * topic's records only once it has passed them. Past it, CreateTopics refuses every topic of the
 * request with POLICY_VIOLATION and this message (the bounded list's exception leaves the
 * controller operation); CreatePartitions refuses only the topic that would cross it, with
 * UNKNOWN_SERVER_ERROR (Kafka catches the exception per topic).
 */
export const MAX_RECORDS_PER_USER_OP = 10_000;

export const EXCESSIVE_BATCH_MESSAGE = 'Unable to perform excessively large batch operation.';
