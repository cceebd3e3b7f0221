/**
 * The client side of the SASL mechanisms (Java's javax.security.sasl.SaslClient, as Kafka's
 * PlainSaslClient, ScramSaslClient and OAuthBearerSaslClient are): given the server's challenge,
 * the next token to send, until the exchange is complete.
 *
 *   PLAIN        one token: `<authzid>\0<username>\0<password>` (RFC 4616)
 *   SCRAM-SHA-*  client-first `n,,n=<user>,r=<cnonce>`, client-final `c=biws,r=<nonce>,p=<proof>`,
 *                then the server signature is checked (RFC 5802, RFC 7677), as ScramSaslClient does
 *   OAUTHBEARER  one token: `n,,\x01auth=Bearer <jwt>\x01\x01` (RFC 7628); an error challenge is
 *                answered with `\x01` so the server can finish with its failure
 *
 * Credentials come from the login module's options in `sasl.jaas.config` (./sasl-login.ts).
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { scramAttributes, xor } from '../auth/scram-wire.js';

export interface SaslClient {
  /** The first token, sent right after SaslHandshake. */
  initial(): Buffer;
  /** The answer to a server challenge; null when the exchange is complete. */
  evaluate(challenge: Buffer): Buffer | null;
}

function failed(mechanism: string, detail: string): KafkaError {
  return new KafkaError(ErrorCode.SASL_AUTHENTICATION_FAILED, `SASL_AUTHENTICATION_FAILED: ${mechanism}: ${detail}`);
}

export function plainClient(username: string, password: string): SaslClient {
  return {
    initial: () => Buffer.from(`\0${username}\0${password}`, 'utf8'),
    evaluate: () => null,
  };
}

const SCRAM_HASHES: Readonly<Record<string, { hash: string; length: number }>> = {
  'SCRAM-SHA-256': { hash: 'sha256', length: 32 },
  'SCRAM-SHA-512': { hash: 'sha512', length: 64 },
};

/** Kafka's ScramMechanism minimum iteration count; a server asking for fewer is refused. */
const SCRAM_MIN_ITERATIONS = 4096;

/** RFC 5802 saslname: `=` and `,` escaped. */
function saslName(user: string): string {
  return user.replace(/=/g, '=3D').replace(/,/g, '=2C');
}

function attributesOf(message: string, mechanism: string): Map<string, string> {
  return scramAttributes(message, () => failed(mechanism, `invalid SCRAM message from the server '${message.slice(0, 40)}'`));
}

export function isScramMechanism(mechanism: string): boolean {
  return SCRAM_HASHES[mechanism] !== undefined;
}

export function scramClient(mechanism: string, username: string, password: string, nonce: string = randomBytes(24).toString('base64')): SaslClient {
  const h = SCRAM_HASHES[mechanism];
  if (h === undefined) throw new KafkaError(ErrorCode.UNSUPPORTED_SASL_MECHANISM, `${mechanism} is not a SCRAM mechanism`);
  const clientFirstBare = `n=${saslName(username)},r=${nonce}`;
  let stage: 'first' | 'final' | 'done' = 'first';
  let expectedServerSignature: Buffer | null = null;
  const hmac = (key: Buffer, data: string): Buffer => createHmac(h.hash, key).update(data, 'utf8').digest();
  return {
    initial: () => Buffer.from(`n,,${clientFirstBare}`, 'utf8'),
    evaluate(challenge) {
      const message = challenge.toString('utf8');
      if (stage === 'first') {
        const a = attributesOf(message, mechanism);
        if (a.has('e')) throw failed(mechanism, a.get('e')!);
        const fullNonce = a.get('r') ?? '';
        const salt = Buffer.from(a.get('s') ?? '', 'base64');
        const iterations = Number(a.get('i'));
        if (!fullNonce.startsWith(nonce) || fullNonce.length <= nonce.length) throw failed(mechanism, 'the server nonce does not extend the client nonce');
        if (!Number.isInteger(iterations) || iterations < SCRAM_MIN_ITERATIONS) throw failed(mechanism, `the server asked for ${a.get('i')} iterations, fewer than ${SCRAM_MIN_ITERATIONS}`);
        const salted = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, h.length, h.hash);
        const clientKey = hmac(salted, 'Client Key');
        const storedKey = createHash(h.hash).update(clientKey).digest();
        const withoutProof = `c=biws,r=${fullNonce}`;
        const authMessage = `${clientFirstBare},${message},${withoutProof}`;
        const proof = xor(clientKey, hmac(storedKey, authMessage));
        expectedServerSignature = hmac(hmac(salted, 'Server Key'), authMessage);
        stage = 'final';
        return Buffer.from(`${withoutProof},p=${proof.toString('base64')}`, 'utf8');
      }
      if (stage === 'final') {
        const a = attributesOf(message, mechanism);
        if (a.has('e')) throw failed(mechanism, a.get('e')!);
        const v = Buffer.from(a.get('v') ?? '', 'base64');
        if (expectedServerSignature === null || v.length !== expectedServerSignature.length || !timingSafeEqual(v, expectedServerSignature)) {
          throw failed(mechanism, 'the server signature does not match: the server does not hold this credential');
        }
        stage = 'done';
        return null;
      }
      return null;
    },
  };
}

/** OAUTHBEARER with a token already obtained (./sasl-login.ts fetches or reads it). */
export function oauthBearerClient(token: string, extensions: ReadonlyMap<string, string> = new Map()): SaslClient {
  let sent = false;
  return {
    initial: () => {
      sent = true;
      const ext = [...extensions].map(([k, v]) => `${k}=${v}\x01`).join('');
      return Buffer.from(`n,,\x01auth=Bearer ${token}\x01${ext}\x01`, 'utf8');
    },
    evaluate(challenge) {
      // RFC 7628 §3.2.3: a non-empty challenge after the token is the server's error report; the
      // client answers with a single %x01 and the server then fails the exchange.
      if (sent && challenge.length > 0) return Buffer.from([1]);
      return null;
    },
  };
}
