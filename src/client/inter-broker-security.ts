/**
 * How this node connects to the other nodes of its cluster (replica fetch, transaction markers,
 * mirror state RPCs): over its inter-broker listener's security protocol, with the node's own
 * credentials, as Kafka's broker-side channel builders do for `inter.broker.listener.name`.
 *
 * - TLS (SSL, SASL_SSL): the listener's ssl.* keys (`listener.name.<l>.ssl.*` first, then the
 *   broker-wide key): the trust store verifies the other node; the key store is this node's
 *   client certificate (mTLS when the other side asks for one).
 * - SASL (SASL_PLAINTEXT, SASL_SSL): the mechanism is `sasl.mechanism.inter.broker.protocol`
 *   (Kafka's default GSSAPI is not served, so it must be set), which the listener must enable; the
 *   login is the `username` / `password` options of the listener's JAAS config for that mechanism
 *   (`listener.name.<l>.<mechanism>.sasl.jaas.config`, else `sasl.jaas.config`), the same entry
 *   whose `user_<name>` options list a PLAIN listener's users.
 * - PLAINTEXT: a bare connection.
 *
 * The node's principal (the SASL user, or the certificate's mapped subject) must hold
 * CLUSTER_ACTION on the cluster when an authorizer is on, as in Kafka, or follower fetches,
 * WriteTxnMarkers and the mirror state RPCs are refused.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { SecurityProtocol, listenerValue, type ConfigLookup, type ListenerPlan } from '../config/listeners.js';
import type { KafkaClientOptions } from './client-options.js';
import { tlsOptionsFromConfig } from './client-options.js';
import { saslAuthenticator } from './sasl-authenticate.js';
import { saslLoginFromConfig } from './sasl-login.js';
import { tlsSockets } from './socket-factory.js';

/** The transport and login of every inter-broker connection (nothing set: PLAINTEXT). */
export type InterBrokerSecurity = Pick<KafkaClientOptions, 'socketFactory' | 'authenticate'>;

export const PLAINTEXT_INTER_BROKER: InterBrokerSecurity = {};

/** The client ssl.* keys a listener's values are read for. */
const SSL_KEYS = [
  'ssl.truststore.location',
  'ssl.truststore.password',
  'ssl.truststore.type',
  'ssl.truststore.certificates',
  'ssl.keystore.location',
  'ssl.keystore.password',
  'ssl.keystore.type',
  'ssl.keystore.certificate.chain',
  'ssl.keystore.key',
  'ssl.key.password',
  'ssl.enabled.protocols',
  'ssl.endpoint.identification.algorithm',
];

function invalid(message: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_CONFIG, message);
}

/**
 * Builds the inter-broker security of the planned inter-broker listener; throws INVALID_CONFIG
 * naming the key to set when it cannot (no mechanism, a mechanism the listener does not enable,
 * no username/password in its JAAS config, an unreadable store).
 */
export function interBrokerSecurity(cfg: ConfigLookup, plan: ListenerPlan): InterBrokerSecurity {
  const spec = plan.listeners.find((l) => l.name === plan.interBrokerListener);
  if (spec === undefined) throw invalid(`inter-broker listener ${plan.interBrokerListener} is not in listeners`);
  const p = spec.securityProtocol;
  const usesTls = p === SecurityProtocol.SSL || p === SecurityProtocol.SASL_SSL;
  const usesSasl = p === SecurityProtocol.SASL_PLAINTEXT || p === SecurityProtocol.SASL_SSL;
  const client = new Map<string, string>();
  const get = (k: string): string | undefined => listenerValue(cfg, spec.name, k);
  const out: { -readonly [K in keyof InterBrokerSecurity]: InterBrokerSecurity[K] } = {};
  if (usesTls) {
    for (const k of SSL_KEYS) {
      const v = get(k);
      if (v !== undefined) client.set(k, v);
    }
    try {
      out.socketFactory = tlsSockets(tlsOptionsFromConfig(client));
    } catch (err) {
      throw invalid(`inter-broker listener ${spec.name}: ${(err as Error).message}`);
    }
  }
  if (usesSasl) {
    const mechanism = (cfg.isExplicit('sasl.mechanism.inter.broker.protocol') ? (cfg.get('sasl.mechanism.inter.broker.protocol') ?? '') : '').trim().toUpperCase();
    const enabled = (get('sasl.enabled.mechanisms') ?? '').split(',').map((s) => s.trim().toUpperCase()).filter(Boolean);
    if (mechanism === '') {
      throw invalid(`inter-broker listener ${spec.name} uses ${p}: set sasl.mechanism.inter.broker.protocol to one of its enabled mechanisms (${enabled.join(', ')})`);
    }
    if (!enabled.includes(mechanism)) {
      throw invalid(`sasl.mechanism.inter.broker.protocol ${mechanism} is not enabled on the inter-broker listener ${spec.name} (sasl.enabled.mechanisms: ${enabled.join(', ')})`);
    }
    const jaasKey = `listener.name.${spec.name.toLowerCase()}.${mechanism.toLowerCase()}.sasl.jaas.config`;
    const jaas = cfg.get(jaasKey) ?? cfg.get('sasl.jaas.config');
    if (jaas === undefined) throw invalid(`inter-broker SASL ${mechanism} needs this node's username and password in ${jaasKey}`);
    client.set('sasl.mechanism', mechanism);
    client.set('sasl.jaas.config', jaas);
    try {
      out.authenticate = saslAuthenticator(saslLoginFromConfig(client));
    } catch (err) {
      throw invalid(`inter-broker login from ${jaasKey}: ${(err as Error).message}`);
    }
  }
  return out;
}
