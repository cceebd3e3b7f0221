/**
 * The one error every decoder in src/protocol throws on malformed input. Connection code catches
 * it once per frame and answers with a Kafka error code or closes the socket.
 */
export class DecodeError extends Error {
  override readonly name = 'DecodeError';
  constructor(
    message: string,
    readonly offset: number = -1,
  ) {
    super(offset >= 0 ? `${message} (at byte ${offset})` : message);
  }
}
