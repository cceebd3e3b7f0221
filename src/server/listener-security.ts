/**
 * What securing one listener takes, built from Kafka's keys before the port is bound: the TLS
 * context for SSL and SASL_SSL, the SASL mechanisms for SASL_PLAINTEXT and SASL_SSL. Every key is
 * read per listener first (`listener.name.<name>.<key>`), then broker-wide, as Kafka's
 * ListenerName.configPrefix does; a mechanism's JAAS config is
 * `listener.name.<name>.<mechanism>.sasl.jaas.config`.
 */
import type { Logger } from '../common/logger.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { parseJaasConfig } from '../auth/jaas.js';
import { OAuthBearerMechanism } from '../auth/oauthbearer-server.js';
import { PlainMechanism } from '../auth/plain-server.js';
import type { SaslMechanism } from '../auth/sasl-mechanism.js';
import { ScramMechanism, type ScramCredentialLookup } from '../auth/scram-server.js';
import { SecurityProtocol, listenerValue, type ConfigLookup, type ListenerSpec } from '../config/listeners.js';
import { TlsServerContext } from './tls-context.js';

/** What the node supplies to listeners: the SCRAM credentials of its metadata image. */
export interface SecurityDeps {
  readonly scramCredential: ScramCredentialLookup;
}

export interface SaslListenerSettings {
  readonly mechanisms: ReadonlyMap<string, SaslMechanism>;
  /** `connections.max.reauth.ms` (KIP-368); 0: sessions never expire. */
  readonly maxReauthMs: number;
  /** `connection.failed.authentication.delay.ms`: a failed login's answer waits this long. */
  readonly failedAuthenticationDelayMs: number;
  /** `sasl.server.max.receive.size`: the most a client may send before it is authenticated. */
  readonly maxReceiveSize: number;
}

export interface ListenerSecurity {
  readonly listener: string;
  readonly tls: TlsServerContext | null;
  readonly sasl: SaslListenerSettings | null;
  /** A connection not authenticated (TLS handshake and SASL) this long after it opened is closed. */
  readonly authenticationTimeoutMs: number;
  close(): void;
}

const SUPPORTED_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'];

function invalid(message: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_CONFIG, message);
}

function intValue(v: string | undefined, fallback: number, key: string): number {
  if (v === undefined || v.trim() === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw invalid(`Invalid value for ${key}: expected a non-negative integer, got '${v}'`);
  return n;
}

function mechanismFor(name: string, spec: ListenerSpec, cfg: ConfigLookup, deps: SecurityDeps): SaslMechanism {
  const l = spec.name.toLowerCase();
  const jaasKey = `listener.name.${l}.${name.toLowerCase()}.sasl.jaas.config`;
  const jaasText = cfg.get(jaasKey) ?? cfg.get('sasl.jaas.config');
  switch (name) {
    case 'PLAIN': {
      if (!jaasText) {
        throw invalid(
          `listener ${spec.name} enables SASL mechanism PLAIN but has no users: set ${jaasKey} to ` +
            `org.apache.kafka.common.security.plain.PlainLoginModule required user_<name>="<password>";`,
        );
      }
      return new PlainMechanism(parseJaasConfig(jaasText, jaasKey));
    }
    case 'SCRAM-SHA-256':
    case 'SCRAM-SHA-512':
      return new ScramMechanism(name, deps.scramCredential);
    case 'OAUTHBEARER': {
      const get = (k: string): string | undefined => listenerValue(cfg, spec.name, k);
      const url = get('sasl.oauthbearer.jwks.endpoint.url');
      if (!url) {
        throw invalid(`listener ${spec.name} enables SASL mechanism OAUTHBEARER but sasl.oauthbearer.jwks.endpoint.url is not set (unsigned tokens are not accepted)`);
      }
      try {
        new URL(url);
      } catch {
        throw invalid(`sasl.oauthbearer.jwks.endpoint.url '${url}' is not a URL`);
      }
      const audience = (get('sasl.oauthbearer.expected.audience') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      return new OAuthBearerMechanism({
        jwksUrl: url,
        expectedAudience: audience,
        expectedIssuer: get('sasl.oauthbearer.expected.issuer') ?? null,
        subClaim: get('sasl.oauthbearer.sub.claim.name') ?? 'sub',
        clockSkewSeconds: intValue(get('sasl.oauthbearer.clock.skew.seconds'), 30, 'sasl.oauthbearer.clock.skew.seconds'),
      });
    }
    default:
      throw invalid(
        `listener ${spec.name} enables SASL mechanism ${name}, which this node does not serve (it serves ${SUPPORTED_MECHANISMS.join(', ')}); ` +
          `set listener.name.${l}.sasl.enabled.mechanisms or sasl.enabled.mechanisms`,
      );
  }
}

/** Builds the listener's security; throws INVALID_CONFIG (naming the listener) when it cannot be served. */
export function listenerSecurity(spec: ListenerSpec, cfg: ConfigLookup, deps: SecurityDeps, log: Logger): ListenerSecurity {
  const get = (k: string): string | undefined => listenerValue(cfg, spec.name, k);
  const p = spec.securityProtocol;
  const usesTls = p === SecurityProtocol.SSL || p === SecurityProtocol.SASL_SSL;
  const usesSasl = p === SecurityProtocol.SASL_PLAINTEXT || p === SecurityProtocol.SASL_SSL;
  const authenticationTimeoutMs = intValue(cfg.get('fjord.authentication.timeout.ms'), 10_000, 'fjord.authentication.timeout.ms');
  let sasl: SaslListenerSettings | null = null;
  if (usesSasl) {
    const enabled = (get('sasl.enabled.mechanisms') ?? 'GSSAPI').split(',').map((s) => s.trim().toUpperCase()).filter(Boolean);
    if (enabled.length === 0) throw invalid(`listener ${spec.name} uses ${p} but sasl.enabled.mechanisms is empty`);
    const mechanisms = new Map<string, SaslMechanism>();
    for (const name of enabled) mechanisms.set(name, mechanismFor(name, spec, cfg, deps));
    sasl = {
      mechanisms,
      maxReauthMs: intValue(get('connections.max.reauth.ms'), 0, 'connections.max.reauth.ms'),
      failedAuthenticationDelayMs: intValue(cfg.get('connection.failed.authentication.delay.ms'), 100, 'connection.failed.authentication.delay.ms'),
      maxReceiveSize: intValue(get('sasl.server.max.receive.size'), 524288, 'sasl.server.max.receive.size'),
    };
  }
  let tls: TlsServerContext | null = null;
  if (usesTls) {
    // On SASL_SSL, SASL authenticates the client: only a listener-level ssl.client.auth asks for
    // a certificate too (Kafka's SslFactory for SASL_SSL).
    const clientAuth = p === SecurityProtocol.SASL_SSL ? cfg.get(`listener.name.${spec.name.toLowerCase()}.ssl.client.auth`) : get('ssl.client.auth');
    try {
      tls = TlsServerContext.load(spec.name, get, clientAuth, log);
    } catch (err) {
      if (err instanceof KafkaError && !err.message.includes(`listener ${spec.name}`)) {
        throw invalid(`listener ${spec.name}: ${err.message}`);
      }
      throw err;
    }
  }
  return {
    listener: spec.name,
    tls,
    sasl,
    authenticationTimeoutMs,
    close: () => tls?.close(),
  };
}
