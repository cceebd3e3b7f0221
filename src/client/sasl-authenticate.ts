/**
 * SASL on a client connection, as Kafka's SaslClientAuthenticator runs it after ApiVersions:
 * SaslHandshake v1 names the mechanism, then SaslAuthenticate (v0-2, KIP-152) carries the
 * mechanism's tokens until the exchange completes. A refusal fails the connect with the broker's
 * code (SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE) and its
 * message, which is what the mirror shows as the reason its partitions failed.
 *
 * When the broker names a session lifetime (`connections.max.reauth.ms`, KIP-368), the client
 * re-authenticates on the same connection before the session expires, at 85-95% of it as
 * Kafka's client does, so the broker never has to close it; other requests on the connection
 * wait while it runs.
 */
import { ApiKey } from '../protocol/generated/api-table.js';
import { ERRORS, ErrorCode } from '../protocol/generated/errors.js';
import { decodeSaslAuthenticateResponse } from '../protocol/generated/messages/sasl-authenticate-response.js';
import { encodeSaslAuthenticateRequest } from '../protocol/generated/messages/sasl-authenticate-request.js';
import { decodeSaslHandshakeResponse } from '../protocol/generated/messages/sasl-handshake-response.js';
import { encodeSaslHandshakeRequest } from '../protocol/generated/messages/sasl-handshake-request.js';
import { KafkaError } from '../protocol/kafka-error.js';
import type { KafkaConnection } from './kafka-connection.js';
import type { SaslLogin } from './sasl-login.js';

/** More round trips than any mechanism needs: a broker that keeps challenging is refused. */
const MAX_ROUND_TRIPS = 10;

function codeName(code: number): string {
  return ERRORS.get(code)?.name ?? `error ${code}`;
}

/** The `authenticate` hook of KafkaConnectionOptions for one login. */
export function saslAuthenticator(login: SaslLogin): (conn: KafkaConnection) => Promise<void> {
  const authenticate = async (conn: KafkaConnection): Promise<void> => {
    const lifetimeMs = await exchange(conn, login);
    if (lifetimeMs > 0) scheduleReauthentication(conn, lifetimeMs, () => conn.holdRequests(() => exchange(conn, login)));
  };
  return authenticate;
}

/** One handshake and exchange; resolves with the session lifetime the broker gave (0: none). */
async function exchange(conn: KafkaConnection, login: SaslLogin): Promise<number> {
  const hv = conn.pickVersion(ApiKey.SaslHandshake, [1, 1]);
  if (hv < 0) throw new KafkaError(ErrorCode.ILLEGAL_SASL_STATE, `${conn.address}: the broker does not offer SaslHandshake v1 (is this a SASL listener?)`);
  const hs = await conn.request(ApiKey.SaslHandshake, hv, (w) => encodeSaslHandshakeRequest(w, { mechanism: login.mechanism }, hv), (r) => decodeSaslHandshakeResponse(r, hv), true);
  if (hs.errorCode !== ErrorCode.NONE) {
    throw new KafkaError(hs.errorCode, `${codeName(hs.errorCode)}: ${conn.address} does not accept SASL mechanism ${login.mechanism} (it offers ${hs.mechanisms.join(', ') || 'none'})`);
  }
  const av = conn.pickVersion(ApiKey.SaslAuthenticate, [0, 2]);
  if (av < 0) throw new KafkaError(ErrorCode.ILLEGAL_SASL_STATE, `${conn.address}: the broker does not offer SaslAuthenticate`);
  const client = await login.newClient();
  let token: Buffer | null = client.initial();
  let lifetimeMs = 0;
  for (let round = 0; token !== null; round++) {
    if (round >= MAX_ROUND_TRIPS) throw new KafkaError(ErrorCode.ILLEGAL_SASL_STATE, `${conn.address}: SASL ${login.mechanism} did not complete in ${MAX_ROUND_TRIPS} round trips`);
    const sent: Buffer = token;
    const res = await conn.request(ApiKey.SaslAuthenticate, av, (w) => encodeSaslAuthenticateRequest(w, { authBytes: sent }, av), (r) => decodeSaslAuthenticateResponse(r, av), true);
    if (res.errorCode !== ErrorCode.NONE) {
      throw new KafkaError(res.errorCode, `${codeName(res.errorCode)}: ${conn.address}: ${res.errorMessage ?? `SASL ${login.mechanism} authentication failed`}`);
    }
    lifetimeMs = Number(res.sessionLifetimeMs);
    token = client.evaluate(res.authBytes);
  }
  return lifetimeMs;
}

function scheduleReauthentication(conn: KafkaConnection, lifetimeMs: number, again: () => Promise<number>): void {
  const delay = Math.floor(lifetimeMs * (0.85 + Math.random() * 0.1));
  const timer = setTimeout(() => {
    if (conn.isClosed) return;
    again().then(
      (next) => {
        if (next > 0) scheduleReauthentication(conn, next, again);
      },
      // A failed re-authentication leaves a connection the broker will close: close it now, so
      // the next request reconnects (and reports the failure if it persists).
      () => conn.close(),
    );
  }, delay);
  timer.unref();
  conn.onClose(() => clearTimeout(timer));
}
