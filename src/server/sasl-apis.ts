/**
 * SaslHandshake (key 17, v0-1) and SaslAuthenticate (key 36, v0-2), KIP-152.
 *
 * Behavior: on a SASL listener the connection answers them from its SaslAuthenticator
 * (`saslHandlersFor`). Registered in the API table they are what a PLAINTEXT or SSL listener
 * serves, so ApiVersions advertises both everywhere as Kafka does; there, as in KafkaApis,
 * both answer ILLEGAL_SASL_STATE.
 * Version notes: SaslAuthenticate v1 adds SessionLifetimeMs (KIP-368), v2 is flexible.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { decodeSaslAuthenticateRequest, type SaslAuthenticateRequest } from '../protocol/generated/messages/sasl-authenticate-request.js';
import { encodeSaslAuthenticateResponse, type SaslAuthenticateResponseInput } from '../protocol/generated/messages/sasl-authenticate-response.js';
import { decodeSaslHandshakeRequest, type SaslHandshakeRequest } from '../protocol/generated/messages/sasl-handshake-request.js';
import { encodeSaslHandshakeResponse, type SaslHandshakeResponseInput } from '../protocol/generated/messages/sasl-handshake-response.js';
import type { ApiHandler } from './api-handler.js';
import { SASL_AUTHENTICATE, SASL_HANDSHAKE, type SaslAuthenticator } from './sasl-authenticator.js';

type HandshakeHandler = ApiHandler<SaslHandshakeRequest, SaslHandshakeResponseInput>;
type AuthenticateHandler = ApiHandler<SaslAuthenticateRequest, SaslAuthenticateResponseInput>;

const HANDSHAKE_CODEC = { apiKey: SASL_HANDSHAKE, minVersion: 0, maxVersion: 1, decode: decodeSaslHandshakeRequest, encode: encodeSaslHandshakeResponse } as const;
const AUTHENTICATE_CODEC = { apiKey: SASL_AUTHENTICATE, minVersion: 0, maxVersion: 2, decode: decodeSaslAuthenticateRequest, encode: encodeSaslAuthenticateResponse } as const;

/** The handlers of a listener without SASL: both requests are out of place there. */
export function saslApiHandlers(): ApiHandler[] {
  const handshake: HandshakeHandler = {
    ...HANDSHAKE_CODEC,
    handle: () => ({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] }),
  };
  const authenticate: AuthenticateHandler = {
    ...AUTHENTICATE_CODEC,
    handle: () => ({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, errorMessage: 'SaslAuthenticate request received on a listener without SASL', authBytes: Buffer.alloc(0) }),
  };
  return [handshake as ApiHandler, authenticate as ApiHandler];
}

/** The handlers one SASL connection uses in place of the table's. */
export function saslHandlersFor(auth: SaslAuthenticator): ReadonlyMap<number, ApiHandler> {
  const handshake: HandshakeHandler = {
    ...HANDSHAKE_CODEC,
    handle: (ctx, req) => auth.handshake(req.mechanism, ctx.apiVersion).response,
  };
  const authenticate: AuthenticateHandler = {
    ...AUTHENTICATE_CODEC,
    async handle(ctx, req) {
      const { response } = await auth.authenticate(req.authBytes);
      return {
        errorCode: response.errorCode,
        errorMessage: response.errorMessage,
        authBytes: response.authBytes,
        ...(ctx.apiVersion >= 1 ? { sessionLifetimeMs: response.sessionLifetimeMs } : {}),
      };
    },
  };
  return new Map<number, ApiHandler>([
    [SASL_HANDSHAKE, handshake as ApiHandler],
    [SASL_AUTHENTICATE, authenticate as ApiHandler],
  ]);
}
