/**
 * The ACL APIs on a node without an authorizer, Fjord beside Apache Kafka (`authorizer.class.name`
 * unset on both): DescribeAcls, CreateAcls and DeleteAcls at every version, with valid and with
 * malformed filters and bindings, over raw requests. Kafka's AclApis answers SECURITY_DISABLED
 * (54) with its own messages; every decoded field (throttle time aside) must be the one Kafka sends.
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
    await call(`createAcls.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, CREATIONS);
    await call(`createAcls.none.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, { creations: [] });
    await call(`createAcls.unknownType.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, { creations: [{ ...ALICE_READ, resourceType: 0 }] });
    await call(`createAcls.anyOperation.v${v}`, 30, v, encodeCreateAclsRequest, decodeCreateAclsResponse, { creations: [{ ...ALICE_READ, operation: 1 }] });
    await call(`deleteAcls.v${v}`, 31, v, encodeDeleteAclsRequest, decodeDeleteAclsResponse, DELETIONS);
    await call(`deleteAcls.unknownFilter.v${v}`, 31, v, encodeDeleteAclsRequest, decodeDeleteAclsResponse, { filters: [UNKNOWN_FILTER] });
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
