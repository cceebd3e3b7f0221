import { ERRORS, ErrorCode } from './generated/errors.js';

/**
 * The one base error of the project: it carries a Kafka error code, so the one place that maps
 * exceptions to responses (`errorCodeOf`) can answer with the right code instead of
 * UNKNOWN_SERVER_ERROR. Like Kafka's `ApiException` hierarchy collapsed to its `Errors` code:
 * throw `new KafkaError(ErrorCode.X, message)`; subclass only where a caller must tell an error
 * apart by type (DecodeError, ConfigError).
 */
export class KafkaError extends Error {
  override readonly name: string = 'KafkaError';
  readonly code: number;
  readonly retriable: boolean;

  /** `options.cause`: the failure this one reports, kept for logs (the standard Error chain). */
  constructor(code: number, message?: string, options?: ErrorOptions) {
    const info = ERRORS.get(code);
    super(message ?? info?.message ?? `Kafka error ${code}`, options);
    this.code = code;
    this.retriable = info?.retriable ?? false;
  }

  /** Kafka's name for the code, e.g. `UNKNOWN_TOPIC_OR_PARTITION`. */
  get codeName(): string {
    return ERRORS.get(this.code)?.name ?? `UNKNOWN_${this.code}`;
  }
}

/** The code to answer with for any thrown value: its own code, else UNKNOWN_SERVER_ERROR (-1). */
export function errorCodeOf(err: unknown): number {
  return err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR;
}
