/**
 * The server side of one SASL exchange (Java's javax.security.sasl.SaslServer, as Kafka's
 * SaslServerAuthenticator drives it): tokens in, challenges out, until `complete`.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';

export interface SaslServer {
  /** The server's answer to a client token; throws a SASL_AUTHENTICATION_FAILED KafkaError on bad credentials. */
  evaluate(token: Buffer): Promise<Buffer> | Buffer;
  readonly complete: boolean;
  /** The authenticated user name, once complete. */
  readonly authorizationId: string;
  /** When the credential itself expires (an OAuth token's `exp`), in ms since the epoch; null if never. */
  readonly credentialExpiresAtMs: number | null;
}

export interface SaslMechanism {
  readonly name: string;
  create(): SaslServer;
}

/** SASL_AUTHENTICATION_FAILED with Kafka's wording, so a client shows the user what it would show against Kafka. */
export function authenticationFailed(mechanism: string, detail = 'Invalid credentials'): KafkaError {
  return new KafkaError(ErrorCode.SASL_AUTHENTICATION_FAILED, `Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism}: ${detail}`);
}
