/**
 * The KIP-1279 broker surface a client or operator reads: ApiVersions finalizes the
 * `mirror.version` feature at level 1 (mirroring enabled); the mirror's broker keys, which the
 * node reads once at start, are refused as dynamic changes (INVALID_CONFIG) instead of being
 * accepted and never applied; the reference's keys for a separate internal admin listener are not
 * Fjord's and are reported as unknown when set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiSpec } from '../../src/client/apis.js';
import { Apis } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeApiVersionsRequest, type ApiVersionsRequestInput } from '../../src/protocol/generated/messages/api-versions-request.js';
import { decodeApiVersionsResponse, type ApiVersionsResponse } from '../../src/protocol/generated/messages/api-versions-response.js';
import { startNode, type RunningNode } from '../helpers/node.js';

const ApiVersionsV3: ApiSpec<ApiVersionsRequestInput, ApiVersionsResponse> = { apiKey: 18, versions: [3, 3], encode: encodeApiVersionsRequest, decode: decodeApiVersionsResponse };

let node: RunningNode;
let client: KafkaClient;

beforeAll(async () => {
  node = await startNode({ overrides: { 'mirror.admin.listener.name': 'INTERNAL' } });
  client = new KafkaClient({ bootstrapServers: [node.bootstrap], clientId: 'mirror-keys' });
}, 60_000);

afterAll(async () => {
  client?.close();
  await node?.destroy();
});

describe('mirroring broker keys and feature', () => {
  it('finalizes mirror.version at level 1', async () => {
    const av = await client.send(ApiVersionsV3, { clientSoftwareName: 'fjord-test', clientSoftwareVersion: '1' });
    expect(av.finalizedFeatures).toEqual(expect.arrayContaining([{ name: 'mirror.version', minVersionLevel: 1, maxVersionLevel: 1 }]));
    expect(av.supportedFeatures).toEqual(expect.arrayContaining([{ name: 'mirror.version', minVersion: 0, maxVersion: 1 }]));
  });

  it('refuses a dynamic change of a mirror key read at start, and still takes the dynamic throttle', async () => {
    const alter = async (name: string, value: string) => {
      const r = await client.send(Apis.IncrementalAlterConfigs, { resources: [{ resourceType: 4, resourceName: '1', configs: [{ name, configOperation: 0, value }] }], validateOnly: false });
      return r.responses[0]?.errorCode;
    };
    expect(await alter('mirror.num.replica.fetchers', '4')).toBe(ErrorCode.INVALID_CONFIG);
    expect(await alter('mirror.fetch.wait.max.ms', '50')).toBe(ErrorCode.INVALID_CONFIG);
    expect(await alter('mirror.replication.throttled.rate', '1000000')).toBe(0);
  });

  it('reports the separate admin listener key as unknown', () => {
    expect(node.logs()).toMatch(/unknown configuration key 'mirror.admin.listener.name' is ignored/);
  });
});
