/**
 * Fjord's ACL authorizer, with the semantics of Kafka's StandardAuthorizer
 * (org.apache.kafka.metadata.authorizer.StandardAuthorizer / StandardAuthorizerData):
 *
 * - `super.users` (semicolon-separated principals) are allowed everything, whatever the ACLs.
 * - The ACLs that apply to a resource are the LITERAL ones with its exact name, the PREFIXED ones
 *   whose name is a prefix of it, and the LITERAL `*` wildcard ones of its resource type.
 * - Of those, a binding matches when its principal is the caller's or `User:*`, its host is the
 *   caller's address or `*`, and its operation is the one asked, or ALL; an ALLOW binding for
 *   READ, WRITE, DELETE or ALTER also grants DESCRIBE, and ALTER_CONFIGS grants DESCRIBE_CONFIGS
 *   (DENY bindings imply nothing).
 * - Any matching DENY wins over every ALLOW. With no match, the answer is DENIED when the resource
 *   has bindings at all (for anyone), and `allow.everyone.if.no.acl.found` when it has none.
 *
 * Bindings are indexed by resource type, pattern type and name, so a check costs a few map
 * lookups (one per distinct PREFIXED name length of the type), never a scan of every ACL. The
 * index is updated in place as AccessControlEntry records apply, so nothing it answers can go
 * stale. Single-threaded: the event loop serializes record application and checks.
 */
import { AclOperation, AclPermission, PatternType, SUPPORTED_OPERATIONS, WILDCARD, WILDCARD_PRINCIPAL, operationsBitField, type StandardAcl } from './acl-model.js';

/** Kafka's class name, the value of `authorizer.class.name` that switches authorization on. */
export const STANDARD_AUTHORIZER_CLASS = 'org.apache.kafka.metadata.authorizer.StandardAuthorizer';

/** Who asks: the session principal (`User:alice`) and the client's `host:port`. */
interface AuthorizableRequest {
  readonly principal: string;
  readonly clientAddress: string;
}

interface AuthorizerOptions {
  /** `super.users`: principals separated by semicolons. */
  readonly superUsers: string | null;
  /** `allow.everyone.if.no.acl.found`. */
  readonly allowEveryoneIfNoAclFound: boolean;
}

interface TypeIndex {
  readonly literal: Map<string, Set<StandardAcl>>;
  readonly prefixed: Map<string, Set<StandardAcl>>;
  /** Distinct PREFIXED name lengths → how many names have that length. */
  readonly prefixLengths: Map<number, number>;
}

const IMPLIES_DESCRIBE: ReadonlySet<number> = new Set([AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER]);
const IMPLIES_DESCRIBE_CONFIGS: ReadonlySet<number> = new Set([AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS]);

/** `host:port` (or `[v6]:port`, `v6:port`) → the address Java's getHostAddress would give. */
export function hostOf(clientAddress: string): string {
  const i = clientAddress.lastIndexOf(':');
  let host = i < 0 ? clientAddress : clientAddress.slice(0, i);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  // An IPv4 peer on a dual-stack socket: Kafka sees the IPv4 address.
  if (host.startsWith('::ffff:') && host.includes('.')) host = host.slice(7);
  return host;
}

/** null: the binding does not match; otherwise whether it allows. StandardAuthorizerData.findResult. */
function findResult(acl: StandardAcl, principal: string, host: string, operation: number): boolean | null {
  if (acl.principal !== principal && acl.principal !== WILDCARD_PRINCIPAL) return null;
  if (acl.host !== WILDCARD && acl.host !== host) return null;
  const allow = acl.permissionType === AclPermission.ALLOW;
  if (acl.operation !== AclOperation.ALL) {
    if (allow && operation === AclOperation.DESCRIBE) {
      if (!IMPLIES_DESCRIBE.has(acl.operation)) return null;
    } else if (allow && operation === AclOperation.DESCRIBE_CONFIGS) {
      if (!IMPLIES_DESCRIBE_CONFIGS.has(acl.operation)) return null;
    } else if (acl.operation !== operation) {
      return null;
    }
  }
  return allow;
}

export class StandardAuthorizer {
  private readonly superUsers: ReadonlySet<string>;
  private readonly allowEveryone: boolean;
  private readonly byId = new Map<string, StandardAcl>();
  private readonly index = new Map<number, TypeIndex>();

  constructor(opts: AuthorizerOptions) {
    this.superUsers = new Set(
      (opts.superUsers ?? '')
        .split(';')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    );
    this.allowEveryone = opts.allowEveryoneIfNoAclFound;
  }

  /** An AccessControlEntryRecord applied (a replayed one, or a new one). */
  addAcl(id: string, acl: StandardAcl): void {
    if (this.byId.has(id)) this.removeAcl(id);
    this.byId.set(id, acl);
    let t = this.index.get(acl.resourceType);
    if (!t) this.index.set(acl.resourceType, (t = { literal: new Map(), prefixed: new Map(), prefixLengths: new Map() }));
    const names = acl.patternType === PatternType.PREFIXED ? t.prefixed : t.literal;
    let set = names.get(acl.resourceName);
    if (!set) {
      names.set(acl.resourceName, (set = new Set()));
      if (acl.patternType === PatternType.PREFIXED) t.prefixLengths.set(acl.resourceName.length, (t.prefixLengths.get(acl.resourceName.length) ?? 0) + 1);
    }
    set.add(acl);
  }

  /** A RemoveAccessControlEntryRecord applied. */
  removeAcl(id: string): void {
    const acl = this.byId.get(id);
    if (!acl) return;
    this.byId.delete(id);
    const t = this.index.get(acl.resourceType);
    if (!t) return;
    const prefixed = acl.patternType === PatternType.PREFIXED;
    const names = prefixed ? t.prefixed : t.literal;
    const set = names.get(acl.resourceName);
    if (!set) return;
    set.delete(acl);
    if (set.size > 0) return;
    names.delete(acl.resourceName);
    if (!prefixed) return;
    const n = (t.prefixLengths.get(acl.resourceName.length) ?? 1) - 1;
    if (n === 0) t.prefixLengths.delete(acl.resourceName.length);
    else t.prefixLengths.set(acl.resourceName.length, n);
  }

  isSuperUser(principal: string): boolean {
    return this.superUsers.has(principal);
  }

  /** Whether the caller may perform `operation` on the resource (StandardAuthorizer.authorize). */
  authorize(req: AuthorizableRequest, operation: number, resourceType: number, resourceName: string): boolean {
    if (this.superUsers.has(req.principal)) return true;
    const t = this.index.get(resourceType);
    if (!t) return this.allowEveryone;
    const host = hostOf(req.clientAddress);
    let allowed = false;
    let hasResourceAcls = false;
    const check = (set: Set<StandardAcl> | undefined): boolean => {
      if (!set) return false;
      for (const acl of set) {
        hasResourceAcls = true;
        const r = findResult(acl, req.principal, host, operation);
        if (r === false) return true;
        if (r === true) allowed = true;
      }
      return false;
    };
    if (check(t.literal.get(resourceName))) return false;
    for (const len of t.prefixLengths.keys()) {
      if (len <= resourceName.length && check(t.prefixed.get(resourceName.slice(0, len)))) return false;
    }
    if (resourceName !== WILDCARD && check(t.literal.get(WILDCARD))) return false;
    if (allowed) return true;
    return hasResourceAcls ? false : this.allowEveryone;
  }

  /**
   * Whether the caller may perform `operation` on at least one resource of the type (Kafka's
   * Authorizer.authorizeByResourceType): an ALLOW binding not dominated by a DENY of the same
   * literal name or of a prefix of it. Used where Kafka asks "may write to some topic".
   */
  authorizeByResourceType(req: AuthorizableRequest, operation: number, resourceType: number): boolean {
    // A name no binding can hold: answers for super users and for a type with no bindings.
    if (this.authorize(req, operation, resourceType, 'hardcode')) return true;
    const t = this.index.get(resourceType);
    if (!t) return false;
    const host = hostOf(req.clientAddress);
    const denyLiteral = new Set<string>();
    const denyPrefixed = new Set<string>();
    const allowLiteral: string[] = [];
    const allowPrefixed: string[] = [];
    for (const [names, prefixed] of [[t.literal, false], [t.prefixed, true]] as const) {
      for (const [name, set] of names) {
        for (const acl of set) {
          if (acl.host !== host && acl.host !== WILDCARD) continue;
          if (acl.principal !== req.principal && acl.principal !== WILDCARD_PRINCIPAL) continue;
          if (acl.operation !== operation && acl.operation !== AclOperation.ALL) continue;
          if (acl.permissionType === AclPermission.DENY) {
            if (!prefixed && name === WILDCARD) return false;
            (prefixed ? denyPrefixed : denyLiteral).add(name);
          } else if (acl.permissionType === AclPermission.ALLOW) {
            if (!prefixed && name === WILDCARD) return true;
            (prefixed ? allowPrefixed : allowLiteral).push(name);
          }
        }
      }
    }
    const dominated = (name: string): boolean => {
      for (let i = 1; i <= name.length; i++) if (denyPrefixed.has(name.slice(0, i))) return true;
      return false;
    };
    if (allowLiteral.some((n) => !denyLiteral.has(n) && !dominated(n))) return true;
    return allowPrefixed.some((n) => !dominated(n));
  }

  /** Kafka's authorized-operations bit set for one resource (AuthHelper.authorizedOperations). */
  authorizedOperations(req: AuthorizableRequest, resourceType: number, resourceName: string): number {
    const ops = SUPPORTED_OPERATIONS.get(resourceType) ?? [];
    return operationsBitField(ops.filter((op) => this.authorize(req, op, resourceType, resourceName)));
  }
}
