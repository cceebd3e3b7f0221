/**
 * HTTP Basic logins for the status page, checked against the same users as the node's SASL
 * listeners by the listeners' own SASL mechanisms: PLAIN (the JAAS `user_<name>` passwords) is
 * asked with the RFC 4616 message, SCRAM-SHA-256/512 (the credentials AlterUserScramCredentials
 * stored) by playing the client side of one RFC 5802 exchange in-process, so a password that logs
 * in to Kafka logs in here and no other does. OAUTHBEARER tokens cannot come as a password and
 * are not accepted. The page needs no login when the node has no SASL listener.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import type { SaslMechanism } from '../auth/sasl-mechanism.js';

const SCRAM: Readonly<Record<string, { hash: string; length: number }>> = {
  'SCRAM-SHA-256': { hash: 'sha256', length: 32 },
  'SCRAM-SHA-512': { hash: 'sha512', length: 64 },
};

/** `user:password` of an `Authorization: Basic` header, or null. */
export function basicCredentials(header: string | undefined): { user: string; password: string } | null {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m) return null;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon <= 0) return null;
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** True when one of `mechanisms` accepts the password. Never throws. */
export async function passwordLogin(mechanisms: readonly SaslMechanism[], user: string, password: string): Promise<boolean> {
  for (const m of mechanisms) {
    try {
      if (m.name === 'PLAIN' && (await plain(m, user, password))) return true;
      const scram = SCRAM[m.name];
      if (scram !== undefined && (await scramLogin(m, scram, user, password))) return true;
    } catch {
      // A refused login throws SASL_AUTHENTICATION_FAILED: try the next mechanism.
    }
  }
  return false;
}

async function plain(m: SaslMechanism, user: string, password: string): Promise<boolean> {
  const server = m.create();
  await server.evaluate(Buffer.from(`\u0000${user}\u0000${password}`, 'utf8'));
  return server.complete && server.authorizationId === user;
}

/** RFC 5802 client side: client-first, then the proof from the salted password. */
async function scramLogin(m: SaslMechanism, h: { hash: string; length: number }, user: string, password: string): Promise<boolean> {
  const server = m.create();
  const saslName = user.replace(/=/g, '=3D').replace(/,/g, '=2C');
  const clientNonce = randomBytes(18).toString('base64');
  const clientFirstBare = `n=${saslName},r=${clientNonce}`;
  const serverFirst = (await server.evaluate(Buffer.from(`n,,${clientFirstBare}`, 'utf8'))).toString('utf8');
  const attrs = new Map(serverFirst.split(',').map((p) => [p.slice(0, 1), p.slice(2)]));
  const nonce = attrs.get('r');
  const salt = attrs.get('s');
  const iterations = Number(attrs.get('i'));
  if (!nonce?.startsWith(clientNonce) || salt === undefined || !Number.isInteger(iterations) || iterations <= 0) return false;
  const salted = pbkdf2Sync(password, Buffer.from(salt, 'base64'), iterations, h.length, h.hash);
  const clientKey = createHmac(h.hash, salted).update('Client Key').digest();
  const storedKey = createHash(h.hash).update(clientKey).digest();
  const clientFinalBare = `c=biws,r=${nonce}`;
  const signature = createHmac(h.hash, storedKey).update(`${clientFirstBare},${serverFirst},${clientFinalBare}`).digest();
  const proof = Buffer.from(clientKey.map((b, i) => b ^ signature[i]!));
  await server.evaluate(Buffer.from(`${clientFinalBare},p=${proof.toString('base64')}`, 'utf8'));
  return server.complete && server.authorizationId === user;
}
