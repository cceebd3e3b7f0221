/**
 * The ACL APIs, Fjord beside Apache Kafka, on nodes without an authorizer (`authorizer.class.name`
 * unset on both: Kafka's AclApis answers SECURITY_DISABLED (54) with its own messages) and on nodes
 * with StandardAuthorizer (the anonymous principal a super user): DescribeAcls, CreateAcls and
 * DeleteAcls at every version, with valid and with malformed filters and bindings (UNKNOWN codes
 * and codes no enum has), over raw requests. Every decoded field (throttle time aside) must be the
 * one Kafka sends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reader } from '../../src/protocol/reader.js';
import type { Writer } from '../../src/protocol/writer.js';
import { encodeCreateAclsRequest, type CreateAclsRequestInput } from '../../src/protocol/generated/messages/create-acls-request.js';
import { decodeCreateAclsResponse } from '../../src/protocol/generated/messages/create-acls-response.js';
import { encodeDeleteAclsRequest, type DeleteAclsRequestInput } from '../../src/protocol/generated/messages/delete-acls-request.js';
import { decodeDeleteAclsResponse } from '../../src/protocol/generated/messages/delete-acls-response.js';
import { encodeDescribeAclsRequest, type DescribeAclsRequestInput } from '../../src/protocol/generated/messages/describe-acls-request.js';
import { decodeDescribeAclsResponse } from '../../src/protocol/generated/messages/describe-acls-response.js';
import { WireClient } from '../broker/wire.js';
import { startSecureNode, type SecureNode } from '../server/secure-node.js';
import { startKafkaBroker, type KafkaBroker } from './kafka-broker.js';

type Encode<In> = (w: Writer, m: In, v: number) => void;
type Decode<Out> = (r: Reader, v: number) => Out;

const ALL: DescribeAclsRequestInput = { resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 };
/** resource type UNKNOWN (0): a filter Kafka refuses when it has an authorizer. */
const UNKNOWN_FILTER = { ...ALL, resourceTypeFilter: 0 };
/** Codes no enum has (Kafka's fromCode reads them as UNKNOWN). */
const OUT_OF_RANGE_FILTER = { ...ALL, resourceTypeFilter: 99 };
const OUT_OF_RANGE_PATTERN_FILTER = { ...ALL, patternTypeFilter: 7 };
/** READ on the topic orders for alice. */
const ALICE_READ = { resourceType: 2, resourceName: 'orders', resourcePatternType: 3, principal: 'User:alice', host: '*', operation: 3, permissionType: 3 };
const CREATIONS: CreateAclsRequestInput = {
  // The second has no principal type: invalid with an authorizer.
  creations: [ALICE_READ, { ...ALICE_READ, principal: 'alice' }],
};
const DELETIONS: DeleteAclsRequestInput = {
  filters: [
    { resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 },
    { resourceTypeFilter: 2, resourceNameFilter: 'orders', patternTypeFilter: 3, principalFilter: 'User:alice', hostFilter: '*', operation: 3, permissionType: 3 },
  ],
};

/** Each call's decoded answer without its throttle time, or 'closed' when the broker closed the connection. */
async function observe(port: number): Promise<Record<string, unknown>> {
  const obs: Record<string, unknown> = {};
  const call = async <In, Out extends { throttleTimeMs: number }>(name: string, apiKey: number, v: number, enc: Encode<In>, dec: Decode<Out>, body: In): Promise<void> => {
    const wire = await WireClient.connect(port);
    try {
      const answer = await Promise.race([wire.call(apiKey, v, (w) => enc(w, body, v)).then((r) => dec(r, v)), wire.closed.then(() => 'closed' as const)]);
      if (answer === 'closed') obs[name] = answer;
      else {
        const { throttleTimeMs: _t, ...rest } = answer;
        obs[name] = rest;
      }
    } finally {
      wire.close();
    }
  };
  for (const v of [1, 2, 3]) {
    await call(`describeAcls.v${v}`, 29, v, encodeDescribeAclsRequest, decodeDescribeAclsResponse, ALL);
    await call(`describeAcls.unknownFilter.v${v}`, 29, v, encodeDescribeAclsRequest, decodeDescribeAclsResponse, UNKNOWN_FILTER);
    await call(`describeAcls.outOfRangeType.v${v}`, 29, v, encodeDescribeAclsRequest, decodeDescribeAclsResponse, OUT_OF_RANGE_FILTER);
    await call(`describeAcls.negativeOperation.v${v}`, 29, v, encodeDescribeAclsRequest, decodeDescribeAclsResponse, { ...ALL, operation: -3 });
    await call(`createAcls.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, CREATIONS);
    await call(`createAcls.none.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, { creations: [] });
    await call(`createAcls.unknownType.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, { creations: [{ ...ALICE_READ, resourceType: 0 }] });
    await call(`createAcls.outOfRangeType.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, { creations: [{ ...ALICE_READ, resourceType: 99 }] });
    await call(`createAcls.outOfRangePermission.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, { creations: [{ ...ALICE_READ, permissionType: 9 }] });
    await call(`createAcls.anyResourceType.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, { creations: [{ ...ALICE_READ, resourceType: 1 }] });
    await call(`createAcls.matchPattern.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, { creations: [{ ...ALICE_READ, resourcePatternType: 2 }] });
    await call(`createAcls.anyPermission.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, { creations: [{ ...ALICE_READ, permissionType: 1 }] });
    await call(`createAcls.outOfRangePattern.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, { creations: [{ ...ALICE_READ, resourcePatternType: 9 }] });
    await call(`createAcls.outOfRangeOperation.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, { creations: [{ ...ALICE_READ, operation: 77 }] });
    await call(`createAcls.anyOperation.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, { creations: [{ ...ALICE_READ, operation: 1 }] });
    await call(`deleteAcls.v${v}`, 31, v, encodeDeleteAclsRequest, decodeDeleteAclsResponse, DELETIONS);
    await call(`deleteAcls.unknownFilter.v${v}`, 31, v, encodeDeleteAclsRequest, decodeDeleteAclsResponse, { filters: [UNKNOWN_FILTER] });
    await call(`deleteAcls.outOfRangeOperation.v${v}`, 31, v, encodeDeleteAclsRequest, decodeDeleteAclsResponse, { filters: [{ ...ALL, operation: 50 }] });
    await call(`deleteAcls.outOfRangeType.v${v}`, 31, v, encodeDeleteAclsRequest, decodeDeleteAclsResponse, { filters: [OUT_OF_RANGE_FILTER, ALL] });
    await call(`deleteAcls.outOfRangePattern.v${v}`, 31, v, encodeDeleteAclsRequest, decodeDeleteAclsResponse, { filters: [OUT_OF_RANGE_PATTERN_FILTER] });
  }
  return obs;
}

describe('ACL APIs without an authorizer: Fjord and Apache Kafka', () => {
  let kafka: KafkaBroker;
  let fjord: SecureNode;

  beforeAll(async () => {
    // kafka-broker.ts switches StandardAuthorizer on by default; an empty class name turns it off.
    [kafka, fjord] = await Promise.all([startKafkaBroker({ overrides: { 'authorizer.class.name': '' } }), startSecureNode({ listeners: 'PLAINTEXT://127.0.0.1:0' })]);
  });

  afterAll(async () => {
    await fjord?.close();
    await kafka?.stop();
  });

  it('answers SECURITY_DISABLED exactly as Kafka does', async () => {
    const expected = await observe(kafka.port);
    // The reference answers the ACL APIs with SECURITY_DISABLED, not with an empty ACL list.
    expect(expected['describeAcls.v3']).toMatchObject({ errorCode: 54 });
    const actual = await observe(fjord.port('PLAINTEXT'));
    expect(actual).toEqual(expected);
  });
});

describe('ACL APIs with StandardAuthorizer: Fjord and Apache Kafka', () => {
  let kafka: KafkaBroker;
  let fjord: SecureNode;

  beforeAll(async () => {
    // kafka-broker.ts runs StandardAuthorizer with User:ANONYMOUS as a super user by default.
    [kafka, fjord] = await Promise.all([
      startKafkaBroker(),
      startSecureNode({ listeners: 'PLAINTEXT://127.0.0.1:0', 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:ANONYMOUS' }),
    ]);
  });

  afterAll(async () => {
    await fjord?.close();
    await kafka?.stop();
  });

  it('validates filters and bindings exactly as Kafka does', async () => {
    const expected = await observe(kafka.port);
    // The reference created alice's binding and refused the one without a principal type.
    expect(expected['createAcls.v1']).toMatchObject({ results: [{ errorCode: 0 }, { errorCode: 42 }] });
    const actual = await observe(fjord.port('PLAINTEXT'));
    expect(actual).toEqual(expected);
  });
});
