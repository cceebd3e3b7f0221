/**
 * SASL/OAUTHBEARER (RFC 7628) with JWT validation, the server side as Kafka's
 * OAuthBearerSaslServer with OAuthBearerValidatorCallbackHandler runs it (KIP-768): the client's
 * first message `n,,\x01auth=Bearer <jwt>\x01[key=value\x01...]\x01`; the token's signature is
 * checked against the keys of `sasl.oauthbearer.jwks.endpoint.url` (an http(s) URL on loopback
 * or a `file:` URL, re-read when the file changes), with `exp` required and the expected audience
 * and issuer when configured. A refused token is answered, as RFC 7628 section 3.2.2 says, with a
 * JSON error challenge; the client's `\x01` reply then fails with SASL_AUTHENTICATION_FAILED.
 */
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { authenticationFailed, type SaslMechanism, type SaslServer } from './sasl-mechanism.js';

interface OAuthBearerSettings {
  readonly jwksUrl: string;
  readonly expectedAudience: readonly string[];
  readonly expectedIssuer: string | null;
  readonly subClaim: string;
  readonly clockSkewSeconds: number;
}

const KVSEP = 0x01;
// RFC 7628 separates the client's key/value pairs with the control character 0x01 (kvsep).
// eslint-disable-next-line no-control-regex
const CLIENT_FIRST = /^(?:n|y),(?:a=[^,]*)?,\x01((?:[A-Za-z]+=[\x21-\x7E \t\r\n]*\x01)*)\x01$/;

export class OAuthBearerMechanism implements SaslMechanism {
  readonly name = 'OAUTHBEARER';
  private readonly keys: () => JWTVerifyGetKey;

  constructor(private readonly settings: OAuthBearerSettings) {
    const url = new URL(settings.jwksUrl);
    if (url.protocol === 'file:') {
      const path = fileURLToPath(url);
      let mtime = -1;
      let current: JWTVerifyGetKey | null = null;
      this.keys = () => {
        const m = statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? -1;
        if (current === null || m !== mtime) {
          current = createLocalJWKSet(JSON.parse(readFileSync(path, 'utf8')) as JSONWebKeySet);
          mtime = m;
        }
        return current;
      };
    } else {
      const remote = createRemoteJWKSet(url);
      this.keys = () => remote;
    }
  }

  create(): SaslServer {
    const s = this.settings;
    const keys = this.keys;
    let complete = false;
    let user = '';
    let expiresAt: number | null = null;
    let pendingError: string | null = null;
    return {
      get complete() {
        return complete;
      },
      get authorizationId() {
        return user;
      },
      get credentialExpiresAtMs() {
        return expiresAt;
      },
      async evaluate(token: Buffer): Promise<Buffer> {
        if (pendingError !== null) {
          // RFC 7628 3.2.3: after an error challenge the client sends a lone %x01, then fails.
          if (token.length === 1 && token[0] === KVSEP) throw authenticationFailed('OAUTHBEARER', pendingError);
          throw authenticationFailed('OAUTHBEARER', 'Unexpected message after an error challenge');
        }
        const m = CLIENT_FIRST.exec(token.toString('utf8'));
        if (!m) throw authenticationFailed('OAUTHBEARER', 'Invalid OAUTHBEARER client first message');
        const pairs = new Map<string, string>();
        for (const kv of m[1]!.split('\x01').filter(Boolean)) {
          const eq = kv.indexOf('=');
          pairs.set(kv.slice(0, eq), kv.slice(eq + 1));
        }
        const auth = /^Bearer\s+([A-Za-z0-9\-._~+/]+=*)$/i.exec(pairs.get('auth') ?? '');
        if (!auth) throw authenticationFailed('OAUTHBEARER', 'Invalid OAUTHBEARER client first message: no bearer token');
        try {
          const { payload } = await jwtVerify(auth[1]!, keys(), {
            requiredClaims: ['exp', s.subClaim],
            clockTolerance: s.clockSkewSeconds,
            ...(s.expectedAudience.length > 0 ? { audience: [...s.expectedAudience] } : {}),
            ...(s.expectedIssuer !== null ? { issuer: s.expectedIssuer } : {}),
          });
          const sub = payload[s.subClaim];
          if (typeof sub !== 'string' || sub === '') throw new Error(`claim ${s.subClaim} is not a non-empty string`);
          user = sub;
          expiresAt = typeof payload.exp === 'number' ? payload.exp * 1000 : null;
          complete = true;
          return Buffer.alloc(0);
        } catch (err) {
          pendingError = `invalid_token: ${(err as Error).message}`;
          return Buffer.from(JSON.stringify({ status: 'invalid_token' }), 'utf8');
        }
      },
    };
  }
}
