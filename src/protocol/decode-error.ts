import { KafkaError } from './kafka-error.js';
import { ErrorCode } from './generated/errors.js';

/**
 * The one error every decoder in src/protocol throws on malformed input. It carries
 * INVALID_REQUEST (Kafka's `InvalidRequestException` for bytes that do not parse); record-batch
 * callers answer CORRUPT_MESSAGE instead, as Kafka does for a batch that does not parse. It stays
 * a subclass of KafkaError because callers must tell it apart by type: the connection treats it
 * as connection-fatal (it closes the socket, as Kafka's SocketServer does on an unparsable
 * request), and batch validation turns exactly this error, not any failure, into a partition code.
 */
export class DecodeError extends KafkaError {
  override readonly name: string = 'DecodeError';
  constructor(
    message: string,
    readonly offset: number = -1,
  ) {
    super(ErrorCode.INVALID_REQUEST, offset >= 0 ? `${message} (at byte ${offset})` : message);
  }
}
