/**
 * SASL/PLAIN (RFC 4616) against the users of a PlainLoginModule JAAS config, as Kafka's
 * PlainServerCallbackHandler reads them: option `user_<name>="<password>"`. The message is
 * `[authzid] NUL authcid NUL passwd`; an authzid other than the user is refused (PlainSaslServer).
 * Passwords are compared as SHA-256 digests with timingSafeEqual, and an unknown user is compared
 * against a dummy, so the time taken says nothing about whether the user exists.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { JaasLoginModule } from './jaas.js';
import { authenticationFailed, type SaslMechanism, type SaslServer } from './sasl-mechanism.js';

const DUMMY = createHash('sha256').update('fjord-plain-unknown-user').digest();

export class PlainMechanism implements SaslMechanism {
  readonly name = 'PLAIN';
  private readonly users = new Map<string, Buffer>();

  constructor(jaas: readonly JaasLoginModule[]) {
    for (const m of jaas) {
      for (const [k, v] of m.options) {
        if (k.startsWith('user_')) this.users.set(k.slice(5), createHash('sha256').update(v, 'utf8').digest());
      }
    }
  }

  create(): SaslServer {
    let complete = false;
    let user = '';
    const users = this.users;
    return {
      get complete() {
        return complete;
      },
      get authorizationId() {
        return user;
      },
      credentialExpiresAtMs: null,
      evaluate(token: Buffer): Buffer {
        const parts = token.toString('utf8').split('\u0000');
        if (parts.length !== 3) throw authenticationFailed('PLAIN', 'Invalid SASL/PLAIN response: expected 3 tokens');
        const [authzid, authcid, password] = parts as [string, string, string];
        if (authcid === '') throw authenticationFailed('PLAIN', 'Authentication failed: username not specified');
        const expected = users.get(authcid);
        const given = createHash('sha256').update(password, 'utf8').digest();
        const match = timingSafeEqual(given, expected ?? DUMMY) && expected !== undefined;
        if (!match) throw authenticationFailed('PLAIN', 'Invalid username or password');
        if (authzid !== '' && authzid !== authcid) {
          throw authenticationFailed('PLAIN', 'Authentication failed: Client requested an authorization id that is different from username');
        }
        user = authcid;
        complete = true;
        return Buffer.alloc(0);
      },
    };
  }
}
