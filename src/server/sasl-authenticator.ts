/**
 * The SASL state of one connection, as Kafka's SaslServerAuthenticator keeps it (KIP-43, KIP-152,
 * KIP-368): SaslHandshake picks a mechanism, SaslAuthenticate carries its tokens (after a v0
 * handshake the tokens come as bare size-prefixed frames instead), and the connection is
 * authenticated once the mechanism completes. A failure answers SASL_AUTHENTICATION_FAILED after
 * `connection.failed.authentication.delay.ms` and the connection is then closed. With
 * `connections.max.reauth.ms` set, a session lasts at most that long (and no longer than an
 * OAuth token's expiry); a SaslHandshake v1+ on an authenticated connection re-authenticates it
 * as the same principal.
 *
 * Every authentication and re-authentication outcome is published on `fjord:authentication`
 * (shape in src/metrics/channels.ts) when something listens: Kafka's Selector counts them as
 * successful-/failed-(re)authentication per listener. As in Kafka, every failed step counts, an
 * unsupported mechanism or an illegal SASL state included.
 */
import { channel } from 'node:diagnostics_channel';
import type { Logger } from '../common/logger.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import type { SaslServer } from '../auth/sasl-mechanism.js';
import type { SaslListenerSettings } from './listener-security.js';

export const SASL_HANDSHAKE = 17;
export const SASL_AUTHENTICATE = 36;
const API_VERSIONS = 18;

interface SaslStepResult<T> {
  readonly response: T;
  /** Close the connection once this response is written. */
  readonly close: boolean;
}

interface HandshakeAnswer {
  readonly errorCode: number;
  readonly mechanisms: string[];
}

interface AuthenticateAnswer {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly authBytes: Buffer;
  readonly sessionLifetimeMs: bigint;
}

/** One warn line per interval per listener, however many logins fail: a flood cannot flood the log. */
export class FailedLoginLog {
  private suppressed = 0;
  private lastAt = -Infinity;

  constructor(
    private readonly log: Logger,
    private readonly intervalMs = 1000,
  ) {}

  record(fields: Record<string, unknown>, now: number): void {
    if (now - this.lastAt < this.intervalMs) {
      this.suppressed++;
      return;
    }
    this.log.warn('failed authentication', { ...fields, ...(this.suppressed > 0 ? { suppressedSinceLast: this.suppressed } : {}) });
    this.suppressed = 0;
    this.lastAt = now;
  }
}

type State = 'handshake' | 'authenticate' | 'authenticated' | 'failed';

const authentication = channel('fjord:authentication');

export class SaslAuthenticator {
  private state: State = 'handshake';
  private handshakeVersion = 1;
  private server: SaslServer | null = null;
  private mechanism = '';
  private principalName: string | null = null;
  private expiresAt: number | null = null;
  /** The SASL exchange in progress re-authenticates an authenticated session (KIP-368). */
  private reauthenticating = false;

  constructor(
    private readonly settings: SaslListenerSettings,
    private readonly failures: FailedLoginLog,
    private readonly clientAddress: string,
    /** The listener's name, for the authentication counters. */
    private readonly listener = '',
    private readonly now: () => number = Date.now,
  ) {}

  private report(success: boolean): void {
    if (authentication.hasSubscribers) authentication.publish({ listener: this.listener, success, reauthentication: this.reauthenticating });
  }

  /** `User:<name>` once authenticated; null before. */
  get principal(): string | null {
    return this.principalName === null ? null : `User:${this.principalName}`;
  }

  /** A step failed: the connection closes once that answer is written. */
  get failed(): boolean {
    return this.state === 'failed';
  }

  get authenticated(): boolean {
    return this.principalName !== null;
  }

  /** After a v0 handshake, the next frames are bare SASL tokens, not Kafka requests. */
  get expectsRawToken(): boolean {
    return this.state === 'authenticate' && this.handshakeVersion === 0;
  }

  get maxReceiveSize(): number {
    return this.settings.maxReceiveSize;
  }

  /** An authenticated session past its lifetime (KIP-368): its next request closes the connection. */
  sessionExpired(): boolean {
    return this.expiresAt !== null && this.now() >= this.expiresAt && this.state === 'authenticated';
  }

  /** Before authentication only ApiVersions and the SASL requests are served. */
  allows(apiKey: number): boolean {
    return this.authenticated || apiKey === API_VERSIONS || apiKey === SASL_HANDSHAKE || apiKey === SASL_AUTHENTICATE;
  }

  handshake(mechanism: string, version: number): SaslStepResult<HandshakeAnswer> {
    const mechanisms = [...this.settings.mechanisms.keys()];
    const reauth = this.state === 'authenticated';
    this.reauthenticating = reauth;
    if ((this.state !== 'handshake' && !reauth) || (reauth && version < 1)) {
      this.state = 'failed';
      this.report(false);
      return { response: { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms }, close: true };
    }
    const m = this.settings.mechanisms.get(mechanism);
    if (!m || (reauth && mechanism !== this.mechanism)) {
      this.state = 'failed';
      this.report(false);
      return { response: { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms }, close: true };
    }
    this.mechanism = mechanism;
    this.handshakeVersion = version;
    this.server = m.create();
    this.state = 'authenticate';
    return { response: { errorCode: ErrorCode.NONE, mechanisms }, close: false };
  }

  async authenticate(token: Buffer): Promise<SaslStepResult<AuthenticateAnswer>> {
    const fail = async (code: number, message: string): Promise<SaslStepResult<AuthenticateAnswer>> => {
      this.state = 'failed';
      this.report(false);
      if (code === ErrorCode.SASL_AUTHENTICATION_FAILED) {
        this.failures.record({ client: this.clientAddress, mechanism: this.mechanism, reason: message }, this.now());
        if (this.settings.failedAuthenticationDelayMs > 0) await new Promise((r) => setTimeout(r, this.settings.failedAuthenticationDelayMs));
      }
      return { response: { errorCode: code, errorMessage: message, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n }, close: true };
    };
    if (this.state !== 'authenticate' || this.server === null) {
      return fail(ErrorCode.ILLEGAL_SASL_STATE, 'Unexpected SaslAuthenticate request: no SASL handshake in progress');
    }
    let challenge: Buffer;
    try {
      challenge = await this.server.evaluate(token);
    } catch (err) {
      if (err instanceof KafkaError) return fail(err.code, err.message);
      return fail(ErrorCode.SASL_AUTHENTICATION_FAILED, `Authentication failed with SASL mechanism ${this.mechanism}`);
    }
    if (!this.server.complete) {
      return { response: { errorCode: ErrorCode.NONE, errorMessage: null, authBytes: challenge, sessionLifetimeMs: 0n }, close: false };
    }
    const name = this.server.authorizationId;
    if (this.principalName !== null && this.principalName !== name) {
      return fail(ErrorCode.SASL_AUTHENTICATION_FAILED, `Cannot change principals during re-authentication from User:${this.principalName} to User:${name}`);
    }
    this.principalName = name;
    this.state = 'authenticated';
    const lifetime = this.sessionLifetimeMs(this.server.credentialExpiresAtMs);
    this.expiresAt = lifetime > 0 ? this.now() + lifetime : null;
    this.server = null;
    this.report(true);
    return { response: { errorCode: ErrorCode.NONE, errorMessage: null, authBytes: challenge, sessionLifetimeMs: BigInt(lifetime) }, close: false };
  }

  /** A v0-handshake token: the reply bytes to send bare, or null to close without a reply. */
  async rawToken(token: Buffer): Promise<Buffer | null> {
    const r = await this.authenticate(token);
    return r.close ? null : r.response.authBytes;
  }

  /** Kafka's rule: only with connections.max.reauth.ms set, and never past the credential's expiry. */
  private sessionLifetimeMs(credentialExpiresAt: number | null): number {
    const max = this.settings.maxReauthMs;
    if (max <= 0) return 0;
    if (credentialExpiresAt === null) return max;
    return Math.max(1, Math.min(max, credentialExpiresAt - this.now()));
  }
}
