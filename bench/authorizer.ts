/**
 * The authorizer's cost per check as the ACL count grows: 100, 10,000 and 100,000 topic bindings
 * (LITERAL ones, and one PREFIXED `team-<n>-` in ten, for 50 principals), and, as the baseline in
 * the same run, the same decisions taken by scanning every binding. Prints checks/s for both and
 * the ratio indexed / scan; the index's rate should stay flat as the count grows.
 *
 *   node bench/run.mjs bench/authorizer.ts   (AUTHZ_BENCH_CHECKS=200000 by default)
 */
import { AclOperation, AclPermission, PatternType, ResourceType, type StandardAcl } from '../src/auth/acl-model.js';
import { StandardAuthorizer } from '../src/auth/authorizer.js';

const CHECKS = Number(process.env.AUTHZ_BENCH_CHECKS ?? 200_000);
const caller = { principal: 'User:user-7', clientAddress: '127.0.0.1:40000' };

function bindings(n: number): StandardAcl[] {
  const out: StandardAcl[] = [];
  for (let i = 0; i < n; i++) {
    const prefixed = i % 10 === 0;
    out.push({
      resourceType: ResourceType.TOPIC,
      resourceName: prefixed ? `team-${i}-` : `topic-${i}`,
      patternType: prefixed ? PatternType.PREFIXED : PatternType.LITERAL,
      principal: `User:user-${i % 50}`,
      host: '*',
      operation: i % 3 === 0 ? AclOperation.WRITE : AclOperation.READ,
      permissionType: i % 17 === 0 ? AclPermission.DENY : AclPermission.ALLOW,
    });
  }
  return out;
}

/** The same rule set applied to a flat list, as an authorizer without an index would. */
function scan(acls: readonly StandardAcl[], name: string): boolean {
  let allowed = false;
  let any = false;
  for (const a of acls) {
    const applies = a.patternType === PatternType.LITERAL ? a.resourceName === name || a.resourceName === '*' : name.startsWith(a.resourceName);
    if (!applies) continue;
    any = true;
    if (a.principal !== caller.principal && a.principal !== 'User:*') continue;
    if (a.operation !== AclOperation.READ && a.operation !== AclOperation.ALL) continue;
    if (a.permissionType === AclPermission.DENY) return false;
    allowed = true;
  }
  return allowed || !any ? allowed : false;
}

function rate(f: (i: number) => boolean, checks: number): number {
  let yes = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < checks; i++) if (f(i)) yes++;
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (yes < 0) throw new Error('unreachable');
  return checks / s;
}

for (const n of [100, 10_000, 100_000]) {
  const acls = bindings(n);
  const authz = new StandardAuthorizer({ superUsers: null, allowEveryoneIfNoAclFound: false });
  acls.forEach((a, i) => authz.addAcl(String(i), a));
  const names = Array.from({ length: 1024 }, (_, i) => (i % 2 === 0 ? `topic-${(i * 7919) % n}` : `team-${((i * 7919) % n) - (((i * 7919) % n) % 10)}-orders`));
  const indexed = rate((i) => authz.authorize(caller, AclOperation.READ, ResourceType.TOPIC, names[i & 1023]!), CHECKS);
  const scanChecks = Math.max(200, Math.floor(CHECKS / Math.max(1, n / 100)));
  const scanned = rate((i) => scan(acls, names[i & 1023]!), scanChecks);
  console.log(`${String(n).padStart(7)} ACLs: indexed ${Math.round(indexed).toLocaleString('en')} checks/s, scan ${Math.round(scanned).toLocaleString('en')} checks/s, ratio ${(indexed / scanned).toFixed(1)}`);
}
