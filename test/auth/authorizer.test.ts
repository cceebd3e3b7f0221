/**
 * The StandardAuthorizer's decision rules, as Kafka's StandardAuthorizerData applies them:
 * LITERAL, PREFIXED and `*` bindings, `User:*`, host matching, DENY over ALLOW, implied
 * DESCRIBE / DESCRIBE_CONFIGS (for ALLOW only), super users, the no-ACL default, removal, and
 * authorizeByResourceType's dominance rule.
 */
import { describe, expect, it } from 'vitest';
import { AclOperation as Op, AclPermission, PatternType, ResourceType, type StandardAcl } from '../../src/auth/acl-model.js';
import { StandardAuthorizer, hostOf } from '../../src/auth/authorizer.js';

const alice = { principal: 'User:alice', clientAddress: '127.0.0.1:50000' };
const bob = { principal: 'User:bob', clientAddress: '10.0.0.2:50001' };

function acl(over: Partial<StandardAcl>): StandardAcl {
  return { resourceType: ResourceType.TOPIC, resourceName: 'orders', patternType: PatternType.LITERAL, principal: 'User:alice', host: '*', operation: Op.READ, permissionType: AclPermission.ALLOW, ...over };
}

function authorizer(acls: StandardAcl[], opts: { superUsers?: string; allowEveryone?: boolean } = {}): StandardAuthorizer {
  const a = new StandardAuthorizer({ superUsers: opts.superUsers ?? null, allowEveryoneIfNoAclFound: opts.allowEveryone ?? false });
  acls.forEach((b, i) => a.addAcl(String(i), b));
  return a;
}

describe('StandardAuthorizer', () => {
  it('matches LITERAL names exactly, PREFIXED names as prefixes and * as every name', () => {
    const a = authorizer([
      acl({ resourceName: 'orders' }),
      acl({ resourceName: 'pay', patternType: PatternType.PREFIXED, operation: Op.WRITE }),
      acl({ resourceName: '*', operation: Op.DELETE }),
    ]);
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'orders')).toBe(true);
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'orders2')).toBe(false);
    expect(a.authorize(alice, Op.WRITE, ResourceType.TOPIC, 'payments')).toBe(true);
    expect(a.authorize(alice, Op.WRITE, ResourceType.TOPIC, 'pa')).toBe(false);
    expect(a.authorize(alice, Op.DELETE, ResourceType.TOPIC, 'anything')).toBe(true);
    expect(a.authorize(alice, Op.READ, ResourceType.GROUP, 'orders')).toBe(false);
  });

  it('matches the principal or User:*, and the host or *', () => {
    const a = authorizer([acl({ principal: 'User:*', host: '10.0.0.2' })]);
    expect(a.authorize(bob, Op.READ, ResourceType.TOPIC, 'orders')).toBe(true);
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'orders')).toBe(false);
    expect(hostOf('::ffff:127.0.0.1:9092')).toBe('127.0.0.1');
    expect(hostOf('::1:9092')).toBe('::1');
  });

  it('lets any matching DENY win, wherever it comes from', () => {
    const a = authorizer([acl({ operation: Op.ALL }), acl({ resourceName: 'ord', patternType: PatternType.PREFIXED, permissionType: AclPermission.DENY })]);
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'orders')).toBe(false);
    expect(a.authorize(alice, Op.WRITE, ResourceType.TOPIC, 'orders')).toBe(true);
  });

  it('implies DESCRIBE from READ/WRITE/DELETE/ALTER and DESCRIBE_CONFIGS from ALTER_CONFIGS, for ALLOW only', () => {
    for (const op of [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER]) {
      expect(authorizer([acl({ operation: op })]).authorize(alice, Op.DESCRIBE, ResourceType.TOPIC, 'orders')).toBe(true);
    }
    expect(authorizer([acl({ operation: Op.CREATE })]).authorize(alice, Op.DESCRIBE, ResourceType.TOPIC, 'orders')).toBe(false);
    expect(authorizer([acl({ operation: Op.ALTER_CONFIGS })]).authorize(alice, Op.DESCRIBE_CONFIGS, ResourceType.TOPIC, 'orders')).toBe(true);
    // A DENY on READ denies READ, not DESCRIBE.
    const a = authorizer([acl({ operation: Op.DESCRIBE }), acl({ permissionType: AclPermission.DENY })]);
    expect(a.authorize(alice, Op.DESCRIBE, ResourceType.TOPIC, 'orders')).toBe(true);
  });

  it('allows super users everything, and applies allow.everyone.if.no.acl.found only where no ACL exists', () => {
    const a = authorizer([acl({ permissionType: AclPermission.DENY, operation: Op.ALL })], { superUsers: 'User:admin; User:alice', allowEveryone: true });
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'orders')).toBe(true);
    expect(a.authorize(bob, Op.READ, ResourceType.TOPIC, 'orders')).toBe(false);
    expect(a.authorize(bob, Op.READ, ResourceType.TOPIC, 'other')).toBe(true);
    expect(authorizer([]).authorize(bob, Op.READ, ResourceType.TOPIC, 'other')).toBe(false);
  });

  it('forgets a removed binding', () => {
    const a = authorizer([acl({ resourceName: 'o', patternType: PatternType.PREFIXED })]);
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'orders')).toBe(true);
    a.removeAcl('0');
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'orders')).toBe(false);
  });

  it('answers by resource type unless a DENY dominates every ALLOW', () => {
    const write = (over: Partial<StandardAcl>): StandardAcl => acl({ operation: Op.WRITE, ...over });
    expect(authorizer([write({})]).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(true);
    expect(authorizer([write({}), write({ permissionType: AclPermission.DENY })]).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(false);
    expect(authorizer([write({}), write({ resourceName: 'or', patternType: PatternType.PREFIXED, permissionType: AclPermission.DENY })]).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(false);
    expect(authorizer([write({}), write({ resourceName: 'x', permissionType: AclPermission.DENY })]).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(true);
    expect(authorizer([write({ resourceName: '*', permissionType: AclPermission.DENY }), write({})]).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(false);
    expect(authorizer([]).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(false);
  });

  it('encodes authorized operations as Kafka bit sets', () => {
    const a = authorizer([acl({ operation: Op.READ })]);
    // READ (3) and the DESCRIBE (8) it implies.
    expect(a.authorizedOperations(alice, ResourceType.TOPIC, 'orders')).toBe((1 << 3) | (1 << 8));
  });
});
