/**
 * What the client logs in with, from Kafka's client keys: `sasl.mechanism` and the login module
 * of `sasl.jaas.config`, as Kafka's LoginManager and login callback handlers read them.
 *
 *   PlainLoginModule        username, password
 *   ScramLoginModule        username, password (SCRAM-SHA-256 / SCRAM-SHA-512)
 *   OAuthBearerLoginModule  a token from `sasl.oauthbearer.token.endpoint.url`: a file: URL names
 *                           a file holding the JWT, an http(s) URL is the identity provider's token
 *                           endpoint, asked with the client_credentials grant and the module's
 *                           clientId / clientSecret / scope options (Kafka's
 *                           OAuthBearerLoginCallbackHandler); without a URL, an unsecured token
 *                           built from the unsecuredLogin* options (Kafka's
 *                           OAuthBearerUnsecuredLoginCallbackHandler, for development only)
 *
 * A new token is obtained for every new connection, so a rotated file or an expired token is
 * picked up when the mirror reconnects.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseJaasConfig } from '../auth/jaas.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { isScramMechanism, oauthBearerClient, plainClient, scramClient, type SaslClient } from './sasl-mechanisms.js';

export interface SaslLogin {
  readonly mechanism: string;
  /** A fresh exchange for one connection. */
  newClient(): Promise<SaslClient>;
}

const MODULES: Readonly<Record<string, string>> = {
  PLAIN: 'org.apache.kafka.common.security.plain.PlainLoginModule',
  'SCRAM-SHA-256': 'org.apache.kafka.common.security.scram.ScramLoginModule',
  'SCRAM-SHA-512': 'org.apache.kafka.common.security.scram.ScramLoginModule',
  OAUTHBEARER: 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule',
};

function invalid(message: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_CONFIG, message);
}

/** Reads `sasl.mechanism` / `sasl.jaas.config`; throws INVALID_CONFIG naming what is missing. */
export function saslLoginFromConfig(cfg: ReadonlyMap<string, string>): SaslLogin {
  const mechanism = (cfg.get('sasl.mechanism') ?? 'PLAIN').toUpperCase();
  const expected = MODULES[mechanism];
  if (expected === undefined) throw invalid(`sasl.mechanism ${mechanism} is not supported by the client (${Object.keys(MODULES).join(', ')})`);
  const jaas = cfg.get('sasl.jaas.config');
  if (jaas === undefined || jaas.trim() === '') throw invalid(`sasl.jaas.config is required with sasl.mechanism ${mechanism}`);
  const module = parseJaasConfig(jaas, 'sasl.jaas.config')[0]!;
  if (module.loginModule !== expected) throw invalid(`sasl.mechanism ${mechanism} needs ${expected} in sasl.jaas.config, not ${module.loginModule}`);
  const opt = (k: string): string | undefined => module.options.get(k);
  if (mechanism === 'OAUTHBEARER') {
    const url = cfg.get('sasl.oauthbearer.token.endpoint.url');
    return { mechanism, newClient: async () => oauthBearerClient(await oauthToken(url, module.options)) };
  }
  const username = opt('username');
  const password = opt('password');
  if (username === undefined || password === undefined) throw invalid(`sasl.jaas.config for ${mechanism} needs username and password options`);
  if (isScramMechanism(mechanism)) return { mechanism, newClient: () => Promise.resolve(scramClient(mechanism, username, password)) };
  return { mechanism, newClient: () => Promise.resolve(plainClient(username, password)) };
}

async function oauthToken(url: string | undefined, options: ReadonlyMap<string, string>): Promise<string> {
  if (url === undefined || url === '') return unsecuredToken(options);
  const opt = (k: string): string | undefined => options.get(k);
  if (url.startsWith('file:')) {
    try {
      return readFileSync(fileURLToPath(url), 'utf8').trim();
    } catch (err) {
      throw new KafkaError(ErrorCode.SASL_AUTHENTICATION_FAILED, `SASL_AUTHENTICATION_FAILED: OAUTHBEARER: cannot read the token file ${url}: ${(err as Error).message}`);
    }
  }
  if (!/^https?:/.test(url)) throw invalid(`sasl.oauthbearer.token.endpoint.url must be a file:, http: or https: URL, got ${url}`);
  const clientId = opt('clientId') ?? '';
  const clientSecret = opt('clientSecret') ?? '';
  const body = new URLSearchParams({ grant_type: 'client_credentials' });
  const scope = opt('scope');
  if (scope !== undefined) body.set('scope', scope);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`,
      },
      body,
      signal: AbortSignal.timeout(10_000),
    });
  } catch (err) {
    throw new KafkaError(ErrorCode.NETWORK_EXCEPTION, `OAUTHBEARER: token endpoint ${url} unreachable: ${(err as Error).message}`);
  }
  const text = await res.text();
  if (!res.ok) throw new KafkaError(ErrorCode.SASL_AUTHENTICATION_FAILED, `SASL_AUTHENTICATION_FAILED: OAUTHBEARER: token endpoint ${url} answered ${res.status}: ${text.slice(0, 200)}`);
  let token: unknown;
  try {
    token = (JSON.parse(text) as { access_token?: unknown }).access_token;
  } catch {
    token = undefined;
  }
  if (typeof token !== 'string' || token === '') throw new KafkaError(ErrorCode.SASL_AUTHENTICATION_FAILED, `SASL_AUTHENTICATION_FAILED: OAUTHBEARER: token endpoint ${url} returned no access_token`);
  return token;
}

/** An `alg: none` JWT from the unsecuredLogin* options, as Kafka's unsecured login handler makes one. */
function unsecuredToken(options: ReadonlyMap<string, string>): string {
  const principalClaim = options.get('unsecuredLoginPrincipalClaimName') ?? 'sub';
  const lifetimeS = Number(options.get('unsecuredLoginLifetimeSeconds') ?? '3600');
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = { iat: now, exp: now + (Number.isFinite(lifetimeS) ? lifetimeS : 3600) };
  const strings = 'unsecuredLoginStringClaim_';
  for (const [k, v] of options) if (k.startsWith(strings)) claims[k.slice(strings.length)] = v;
  if (claims[principalClaim] === undefined) throw invalid(`sasl.jaas.config for OAUTHBEARER needs sasl.oauthbearer.token.endpoint.url or the option ${strings}${principalClaim}`);
  const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b64({ alg: 'none' })}.${b64(claims)}.`;
}
