/**
 * The Kafka error codes the log answers with. Numbers are Kafka's (see the protocol's error
 * table); kept here so storage does not depend on the generated protocol module.
 */
export const StorageError = {
  NONE: 0,
  OFFSET_OUT_OF_RANGE: 1,
  CORRUPT_MESSAGE: 2,
  NOT_LEADER_OR_FOLLOWER: 6,
  MESSAGE_TOO_LARGE: 10,
  RECORD_LIST_TOO_LARGE: 18,
  INVALID_TIMESTAMP: 32,
  OUT_OF_ORDER_SEQUENCE_NUMBER: 45,
  DUPLICATE_SEQUENCE_NUMBER: 46,
  INVALID_PRODUCER_EPOCH: 47,
  INVALID_TXN_STATE: 48,
  TRANSACTION_COORDINATOR_FENCED: 52,
  KAFKA_STORAGE_ERROR: 56,
  UNKNOWN_PRODUCER_ID: 59,
  INVALID_RECORD: 87,
} as const;

/** A failure to be reported as a Kafka error code for one append (the log stays usable). */
export class AppendError extends Error {
  override readonly name = 'AppendError';
  constructor(
    readonly errorCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** The log's files can no longer be trusted (a write or fsync failed); the partition goes offline. */
export class LogOfflineError extends Error {
  override readonly name = 'LogOfflineError';
  readonly errorCode = StorageError.KAFKA_STORAGE_ERROR;
}
