import { describe, expect, it } from 'vitest';
import { API_TABLE, ApiKey, ERRORS, ErrorCode } from '../../../src/protocol/generated/index.js';
import { KafkaError, errorCodeOf } from '../../../src/protocol/kafka-error.js';

describe('API table', () => {
  it('knows the standard and mirroring API keys', () => {
    expect(ApiKey.Produce).toBe(0);
    expect(ApiKey.Fetch).toBe(1);
    expect(ApiKey.ApiVersions).toBe(18);
    expect(ApiKey.StartMirrorTopics).toBe(95);
    expect(ApiKey.BumpLeaderEpochs).toBe(105);
    // 94 belongs to upstream's UnregisterController since Kafka 4.2, see messages/README.md
    expect(ApiKey.CreateClusterMirror).toBe(106);
    expect(ApiKey.UnregisterController).toBe(94);
    expect(API_TABLE[94]?.listeners).toEqual(['broker', 'controller']);
    expect(ApiKey.StreamsGroupTopologyDescriptionUpdate).toBe(93);
  });

  it('carries version ranges, listeners and header versions', () => {
    const fetch = API_TABLE[ApiKey.Fetch];
    expect(fetch).toMatchObject({ key: 1, name: 'Fetch', minVersion: 4, maxVersion: 19, flexibleFrom: 12 });
    expect(fetch?.listeners).toEqual(['broker', 'controller']);
    expect(fetch?.requestHeaderVersion(11)).toBe(1);
    expect(fetch?.requestHeaderVersion(12)).toBe(2);
    expect(fetch?.responseHeaderVersion(11)).toBe(0);
    expect(fetch?.responseHeaderVersion(12)).toBe(1);
    expect(API_TABLE[ApiKey.CreateTopics]).toMatchObject({ minVersion: 2, maxVersion: 8 });
    expect(API_TABLE[ApiKey.SaslHandshake]?.flexibleFrom).toBe(-1);
    expect(API_TABLE[ApiKey.SaslHandshake]?.requestHeaderVersion(1)).toBe(1);
    // OffsetCommit v10 became stable in Kafka 4.2; InitProducerId v6 is still unstable in 4.4.
    expect(API_TABLE[ApiKey.OffsetCommit]?.latestVersionUnstable).toBe(false);
    expect(API_TABLE[ApiKey.InitProducerId]?.latestVersionUnstable).toBe(true);
    expect(API_TABLE[ApiKey.ApiVersions]).toMatchObject({ minVersion: 0, maxVersion: 5 });
    expect(API_TABLE[ApiKey.ListOffsets]).toMatchObject({ minVersion: 1, maxVersion: 11 });
    expect(API_TABLE[ApiKey.Produce]?.latestVersionUnstable).toBe(false);
  });

  it('answers ApiVersions in response header v0 even in flexible versions', () => {
    const av = API_TABLE[ApiKey.ApiVersions];
    expect(av?.requestHeaderVersion(3)).toBe(2);
    expect(av?.responseHeaderVersion(3)).toBe(0);
    expect(av?.responseHeaderVersion(4)).toBe(0);
  });

  it('has an entry for every key in ApiKey', () => {
    for (const [name, key] of Object.entries(ApiKey)) expect(API_TABLE[key]?.name).toBe(name);
  });
});

describe('error table', () => {
  it('covers every Kafka code from -1 to 136 and the mirroring codes', () => {
    for (let c = -1; c <= 148; c++) expect(ERRORS.get(c)?.code, `code ${c}`).toBe(c);
    expect(ErrorCode.NONE).toBe(0);
    expect(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION).toBe(3);
    expect(ErrorCode.SHARE_SESSION_LIMIT_REACHED).toBe(133);
    expect(ErrorCode.UNKNOWN_CLUSTER_MIRROR).toBe(137);
    expect(ErrorCode.MIRROR_TOPIC_NOT_STOPPED).toBe(146);
    expect(ErrorCode.READ_ONLY_TOPIC).toBe(147);
    expect(ErrorCode.CLUSTER_MIRROR_ALREADY_EXISTS).toBe(148);
  });

  it('marks retriable errors', () => {
    expect(ERRORS.get(ErrorCode.NOT_LEADER_OR_FOLLOWER)?.retriable).toBe(true);
    expect(ERRORS.get(ErrorCode.TOPIC_AUTHORIZATION_FAILED)?.retriable).toBe(false);
  });

  it('KafkaError carries its code and name', () => {
    const e = new KafkaError(ErrorCode.READ_ONLY_TOPIC);
    expect(e.code).toBe(147);
    expect(e.codeName).toBe('READ_ONLY_TOPIC');
    expect(e.message).toBe(ERRORS.get(147)?.message);
    expect(errorCodeOf(e)).toBe(147);
    expect(errorCodeOf(new Error('boom'))).toBe(-1);
  });
});
