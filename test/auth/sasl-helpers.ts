/** SCRAM users, OAuth keys and tokens, and raw SASL exchanges for the authentication tests. */
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { encodeAlterUserScramCredentialsRequest } from '../../src/protocol/generated/messages/alter-user-scram-credentials-request.js';
import { decodeAlterUserScramCredentialsResponse } from '../../src/protocol/generated/messages/alter-user-scram-credentials-response.js';
import { decodeSaslAuthenticateResponse, type SaslAuthenticateResponse } from '../../src/protocol/generated/messages/sasl-authenticate-response.js';
import { decodeSaslHandshakeResponse, type SaslHandshakeResponse } from '../../src/protocol/generated/messages/sasl-handshake-response.js';
import { Writer } from '../../src/protocol/writer.js';
import { WireClient } from '../broker/wire.js';

/** Stores a SCRAM credential with AlterUserScramCredentials (as `kafka-configs --add-config` does). */
export async function addScramUser(port: number, user: string, password: string, mechanism: 1 | 2, iterations = 4096): Promise<void> {
  const salt = randomBytes(24);
  const saltedPassword = pbkdf2Sync(password, salt, iterations, mechanism === 1 ? 32 : 64, mechanism === 1 ? 'sha256' : 'sha512');
  const c = await WireClient.connect(port);
  try {
    const r = await c.call(51, 0, (w) => encodeAlterUserScramCredentialsRequest(w, { upsertions: [{ name: user, mechanism, iterations, salt, saltedPassword }] }, 0));
    const res = decodeAlterUserScramCredentialsResponse(r, 0);
    if (res.results[0]?.errorCode !== 0) throw new Error(`AlterUserScramCredentials failed: ${JSON.stringify(res.results)}`);
  } finally {
    c.close();
  }
}

export interface OAuthIssuer {
  readonly jwksFile: string;
  token(claims: { sub: string; aud?: string; iss?: string; expiresInSeconds?: number }): Promise<string>;
}

export async function makeOAuthIssuer(jwksFile: string): Promise<OAuthIssuer> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = await exportJWK(publicKey);
  writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...jwk, kid: 'k1', alg: 'RS256', use: 'sig' }] }));
  return {
    jwksFile,
    token: (c) => sign(privateKey, c),
  };
}

async function sign(key: CryptoKey, c: { sub: string; aud?: string; iss?: string; expiresInSeconds?: number }): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  let jwt = new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setSubject(c.sub).setIssuedAt(now - 60).setExpirationTime(now + (c.expiresInSeconds ?? 3600));
  if (c.aud) jwt = jwt.setAudience(c.aud);
  if (c.iss) jwt = jwt.setIssuer(c.iss);
  return jwt.sign(key);
}

/** A raw connection that speaks the SASL requests itself. */
export class SaslWire {
  private constructor(readonly wire: WireClient) {}

  static async connect(port: number): Promise<SaslWire> {
    return new SaslWire(await WireClient.connect(port));
  }

  /** The request's answer; rejects with 'closed' when the node closes the connection instead. */
  private call(apiKey: number, version: number, body: Parameters<WireClient['call']>[2]): ReturnType<WireClient['call']> {
    return Promise.race([
      this.wire.call(apiKey, version, body),
      this.wire.closed.then(() => {
        throw new Error('closed');
      }),
    ]);
  }

  async handshake(mechanism: string, version = 1): Promise<SaslHandshakeResponse> {
    const r = await this.call(17, version, (w) => w.string(mechanism));
    return decodeSaslHandshakeResponse(r, version);
  }

  async authenticate(token: Buffer, version = 2): Promise<SaslAuthenticateResponse> {
    const r = await this.call(36, version, (w) => (version >= 2 ? w.compactBytes(token).uvarint(0) : w.bytes(token)));
    return decodeSaslAuthenticateResponse(r, version);
  }

  /** ApiVersions v0's error code; rejects when the connection is closed instead. */
  async apiVersions(): Promise<number> {
    const r = await this.call(18, 0, () => undefined);
    return r.int16();
  }

  /** Metadata v1 for no topics: resolves with the broker count; rejects if closed. */
  async metadata(): Promise<number> {
    const r = await this.call(3, 1, (w) => w.int32(0));
    return r.int32();
  }

  get closed(): Promise<void> {
    return this.wire.closed;
  }

  close(): void {
    this.wire.close();
  }
}

/**
 * A v0 SaslHandshake for PLAIN, then the token as a bare frame (no Kafka header), on a plain
 * socket: resolves with the bare reply's size, or null when the node closes the connection.
 * The socket is left open, authenticated or not, for the caller to go on with.
 */
export function bareTokenLogin(port: number, token: Buffer): Promise<{ replySize: number | null; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      const hs = new Writer().int16(17).int16(0).int32(1).nullableString('bare').string('PLAIN').toBuffer();
      socket.write(Buffer.concat([sizePrefix(hs.length), hs]));
    });
    let buf = Buffer.alloc(0);
    let stage: 'handshake' | 'token' = 'handshake';
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length < 4 || buf.length < 4 + buf.readInt32BE(0)) return;
      const size = buf.readInt32BE(0);
      buf = buf.subarray(4 + size);
      if (stage === 'handshake') {
        stage = 'token';
        socket.write(Buffer.concat([sizePrefix(token.length), token]));
        return;
      }
      socket.removeAllListeners('data');
      resolve({ replySize: size, socket });
    });
    socket.once('close', () => resolve({ replySize: null, socket }));
    socket.once('error', reject);
  });
}

function sizePrefix(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n, 0);
  return b;
}

export function plainToken(user: string, password: string, authzid = ''): Buffer {
  return Buffer.from(`${authzid}\u0000${user}\u0000${password}`, 'utf8');
}
