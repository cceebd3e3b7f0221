/**
 * Switches authorization on when `authorizer.class.name` names Kafka's StandardAuthorizer: the
 * authorizer is built from `super.users` and `allow.everyone.if.no.acl.found`, loaded with the
 * ACLs of the metadata image, kept in step with every AccessControlEntry record the controller
 * applies afterwards (created through CreateAcls or synced from a mirror source alike), and every
 * registered API handler is wrapped by its guard. Without the key nothing is checked, as in
 * Kafka with no authorizer.
 */
import { StandardAuthorizer, STANDARD_AUTHORIZER_CLASS } from '../../auth/authorizer.js';
import type { Controller } from '../../controller/controller.js';
import type { ApiHandler } from '../../server/api-handler.js';
import type { BrokerConfig } from '../config.js';
import { CLUSTER_GUARDS } from './cluster-guards.js';
import { DATA_GUARDS } from './data-guards.js';
import { GROUP_GUARDS } from './group-guards.js';
import { Authz, type Guard } from './guard.js';
import { TOPIC_GUARDS } from './topic-guards.js';
import { TXN_MIRROR_GUARDS } from './txn-mirror-guards.js';
import { SHARE_GUARDS } from './share-guards.js';

/** ApiVersions and the SASL exchange come before any principal exists: Kafka never authorizes them. */
const UNAUTHORIZED_APIS: ReadonlySet<number> = new Set([17, 18, 36]);

const API_GUARDS: ReadonlyMap<number, Guard<unknown, unknown>> = new Map(
  [...DATA_GUARDS, ...TOPIC_GUARDS, ...GROUP_GUARDS, ...CLUSTER_GUARDS, ...TXN_MIRROR_GUARDS, ...SHARE_GUARDS].map((g) => [g.apiKey, g]),
);

function authorizerClassName(config: BrokerConfig): string {
  return (config.get('authorizer.class.name') ?? '').trim();
}

/**
 * Whether `authorizer.class.name` is set (an unsupported class stops the start, see below). Like
 * Kafka's broker, a node without one stores no ACLs: its ACL APIs answer SECURITY_DISABLED.
 */
export function hasAuthorizer(config: BrokerConfig): boolean {
  return authorizerClassName(config) !== '';
}

/** The authorizer `authorizer.class.name` asks for, or null when the key is unset. */
export function authorizerFromConfig(config: BrokerConfig): StandardAuthorizer | null {
  const className = authorizerClassName(config);
  if (className === '') return null;
  if (className !== STANDARD_AUTHORIZER_CLASS) {
    throw new Error(`authorizer.class.name=${className} is not supported: Fjord serves ${STANDARD_AUTHORIZER_CLASS}`);
  }
  return new StandardAuthorizer({ superUsers: config.get('super.users') ?? null, allowEveryoneIfNoAclFound: config.bool('allow.everyone.if.no.acl.found') });
}

/** Loads and follows the controller's ACLs. Returns the unsubscribe function. */
export function followAcls(authorizer: StandardAuthorizer, controller: Controller): () => void {
  for (const [id, acl] of controller.image.acls) authorizer.addAcl(id, acl);
  return controller.onChange((records) => {
    for (const rec of records) {
      if (rec.type === 'acl') authorizer.addAcl(rec.id, rec);
      else if (rec.type === 'removeAcl') authorizer.removeAcl(rec.id);
    }
  });
}

/** Replaces each handler by its guarded self. An API with no guard stops the start: none is left open. */
export function guardHandlers(handlers: Map<number, ApiHandler>, authorizer: StandardAuthorizer, controller: Controller, autoCreateTopicsEnable: () => boolean): void {
  const az = new Authz(authorizer, controller.image, autoCreateTopicsEnable);
  for (const [key, h] of handlers) {
    if (UNAUTHORIZED_APIS.has(key)) continue;
    const g = API_GUARDS.get(key);
    if (!g) throw new Error(`API key ${key} has no authorization rule`);
    const next = h.handle.bind(h);
    handlers.set(key, { apiKey: h.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion, decode: h.decode.bind(h), encode: h.encode.bind(h), handle: (ctx, req) => g.run(az, ctx, req, next) });
  }
}
