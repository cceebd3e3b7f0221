/**
 * SASL/SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), the server side as Kafka's
 * ScramSaslServer runs it, over the credentials AlterUserScramCredentials stored (salt,
 * StoredKey, ServerKey, iterations; never the password).
 *
 * client-first `n,,n=<user>,r=<cnonce>` → server-first `r=<cnonce><snonce>,s=<salt>,i=<n>` →
 * client-final `c=biws,r=<nonce>,p=<proof>` → server-final `v=<server signature>`.
 * A user without a credential is answered with a salt derived from the user name and the
 * default iteration count, and refused at the proof, so the exchange looks the same whether the
 * user exists or not. Nonce, channel binding and proof are each checked; the proof comparison is
 * timingSafeEqual. Delegation tokens (the `tokenauth` extension) are not served.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { authenticationFailed, type SaslMechanism, type SaslServer } from './sasl-mechanism.js';
import { scramAttributes, xor } from './scram-wire.js';

interface ScramCredentialData {
  readonly salt: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
  readonly iterations: number;
}

/** The mechanism numbers of UserScramCredentialRecord (Kafka's ScramMechanism). */
const ScramMechanismType = { 'SCRAM-SHA-256': 1, 'SCRAM-SHA-512': 2 } as const;
type ScramMechanismName = keyof typeof ScramMechanismType;

export type ScramCredentialLookup = (user: string, mechanism: number) => ScramCredentialData | undefined;

const HASHES: Readonly<Record<ScramMechanismName, { hash: string; length: number }>> = {
  'SCRAM-SHA-256': { hash: 'sha256', length: 32 },
  'SCRAM-SHA-512': { hash: 'sha512', length: 64 },
};

/** Kafka's ScramFormatter default iteration count, used for the answer to an unknown user. */
const DEFAULT_ITERATIONS = 4096;
/** Per process: the made-up salts of unknown users are stable while the node runs, as real ones are. */
const FAKE_SALT_KEY = randomBytes(32);

const SASLNAME = /^(?:[^=,]|=2C|=3D)+$/;

function attributes(message: string, mechanism: string): Map<string, string> {
  return scramAttributes(message, (part) => authenticationFailed(mechanism, `Invalid SCRAM message attribute '${part.slice(0, 16)}'`));
}

export class ScramMechanism implements SaslMechanism {
  private readonly hash: string;
  private readonly length: number;

  constructor(
    readonly name: ScramMechanismName,
    private readonly credentials: ScramCredentialLookup,
  ) {
    this.hash = HASHES[name].hash;
    this.length = HASHES[name].length;
  }

  create(): SaslServer {
    const mech = this.name;
    const { hash, length } = this;
    const lookup = this.credentials;
    let stage: 'first' | 'final' | 'done' = 'first';
    let user = '';
    let gs2Header = '';
    let clientFirstBare = '';
    let serverFirst = '';
    let nonce = '';
    let credential: ScramCredentialData;
    let known = false;
    return {
      get complete() {
        return stage === 'done';
      },
      get authorizationId() {
        return user;
      },
      credentialExpiresAtMs: null,
      evaluate(token: Buffer): Buffer {
        const text = token.toString('utf8');
        if (stage === 'first') {
          // gs2-header: cbind flag ("n" or "y"; "p" is channel binding, which Kafka does not support), authzid.
          const m = /^([ny]),(a=[^,]*)?,(n=[^,]*,r=[^,]+(?:,.*)?)$/.exec(text);
          if (!m) throw authenticationFailed(mech, 'Invalid SCRAM client first message');
          gs2Header = `${m[1]},${m[2] ?? ''},`;
          clientFirstBare = m[3]!;
          if (/(?:^|,)tokenauth=true(?:,|$)/.test(clientFirstBare)) throw authenticationFailed(mech, 'Delegation tokens are not supported');
          const attrs = attributes(clientFirstBare, mech);
          const saslName = attrs.get('n') ?? '';
          if (!SASLNAME.test(saslName)) throw authenticationFailed(mech, 'Invalid user name in SCRAM client first message');
          user = saslName.replace(/=2C/g, ',').replace(/=3D/g, '=');
          const authzid = m[2]?.slice(2).replace(/=2C/g, ',').replace(/=3D/g, '=');
          if (authzid !== undefined && authzid !== '' && authzid !== user) {
            throw authenticationFailed(mech, 'Authentication failed: Client requested an authorization id that is different from username');
          }
          for (const k of attrs.keys()) {
            if (k !== 'n' && k !== 'r') throw authenticationFailed(mech, `SCRAM extension ${k} is not supported`);
          }
          const found = lookup(user, ScramMechanismType[mech]);
          known = found !== undefined;
          credential = found ?? {
            salt: createHmac('sha256', FAKE_SALT_KEY).update(`${mech}\u0000${user}`).digest().subarray(0, 16),
            storedKey: randomBytes(length),
            serverKey: randomBytes(length),
            iterations: DEFAULT_ITERATIONS,
          };
          // Letters and digits only, as Kafka's ScramFormatter makes it.
          nonce = attrs.get('r')! + randomBytes(18).toString('hex');
          serverFirst = `r=${nonce},s=${credential.salt.toString('base64')},i=${credential.iterations}`;
          stage = 'final';
          return Buffer.from(serverFirst, 'utf8');
        }
        if (stage !== 'final') throw authenticationFailed(mech, 'Unexpected SCRAM message after the exchange completed');
        const pIndex = text.lastIndexOf(',p=');
        if (pIndex < 0) throw authenticationFailed(mech, 'Invalid SCRAM client final message: no proof');
        const withoutProof = text.slice(0, pIndex);
        const attrs = attributes(text, mech);
        // As Kafka's ScramSaslServer, a final nonce must end with the server's: librdkafka 2.0
        // (Debian's kcat) sends its own nonce again in front of the combined one.
        if (!(attrs.get('r') ?? '').endsWith(nonce)) throw authenticationFailed(mech, 'Invalid SCRAM client final message: nonce mismatch');
        if (attrs.get('c') !== Buffer.from(gs2Header, 'utf8').toString('base64')) {
          throw authenticationFailed(mech, 'Invalid SCRAM client final message: channel binding mismatch');
        }
        const proof = Buffer.from(attrs.get('p') ?? '', 'base64');
        const authMessage = `${clientFirstBare},${serverFirst},${withoutProof}`;
        const clientSignature = createHmac(hash, credential.storedKey).update(authMessage).digest();
        const storedKey = proof.length === length ? createHash(hash).update(xor(proof, clientSignature)).digest() : Buffer.alloc(length);
        if (!timingSafeEqual(storedKey, credential.storedKey) || !known) {
          throw authenticationFailed(mech, 'Invalid user credentials');
        }
        stage = 'done';
        const serverSignature = createHmac(hash, credential.serverKey).update(authMessage).digest();
        return Buffer.from(`v=${serverSignature.toString('base64')}`, 'utf8');
      },
    };
  }
}
