import { KafkaError } from '../protocol/kafka-error.js';
import { ErrorCode } from '../protocol/generated/errors.js';

/**
 * A configuration that cannot be used: a value that does not parse or is out of range, a bad
 * listener, a data directory formatted for another node. It carries INVALID_CONFIG like Kafka's
 * `ConfigException`, and stays a subclass because `fjord start` must tell it apart from other
 * failures: it prints the message and exits 1 instead of reporting a crash.
 */
export class ConfigError extends KafkaError {
  override readonly name: string = 'ConfigError';

  constructor(message: string) {
    super(ErrorCode.INVALID_CONFIG, message);
  }
}
