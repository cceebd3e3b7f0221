/**
 * The path globs of the interop suites' known-difference tables (test/interop/known-differences.ts):
 * a listing must accept exactly the differences its key names, since a glob that matches too much
 * hides new differences and one that matches too little fails runs for listed ones. Kept out of
 * test/interop/ so it runs in the unit tier, without the interop suite's Apache Kafka broker.
 */
import { describe, expect, it } from 'vitest';
import { fuzzKnownDifference, knownDifference } from '../interop/known-differences.js';

const TABLE: Readonly<Record<string, string>> = {
  'Alpha:**': 'every alpha difference',
  'Beta v3:topics.*.errorCode': 'beta v3 error codes',
  'Beta:topics.*.partitions.*.errorCode=-1|*': 'kafka -1, any fjord value',
  'Beta:topics.*.name=*|"absent"': 'fjord has no name',
  'Gamma:results.*.configs.controller.quorum.**="present"|"absent"': 'kafka-only keys under controller.quorum',
  'Gamma:results.*.configs.log.**=true|false': 'readOnly under log.',
};

describe('fuzzKnownDifference', () => {
  const listed = (api: string, version: number, pattern: string, kafka: unknown, fjord: unknown): string | null => fuzzKnownDifference(api, version, pattern, kafka, fjord, TABLE);

  it('`**` alone accepts every path of that API, at any version, and no other API', () => {
    expect(listed('Alpha', 0, 'errorCode', 1, 0)).toBe('every alpha difference');
    expect(listed('Alpha', 9, 'a.b.c', undefined, 'present')).toBe('every alpha difference');
    expect(listed('AlphaBeta', 0, 'errorCode', 1, 0)).toBeNull();
  });

  it('`<Api> v<N>:` accepts that version only', () => {
    expect(listed('Beta', 3, 'topics.*.errorCode', 3, 0)).toBe('beta v3 error codes');
    expect(listed('Beta', 4, 'topics.*.errorCode', 3, 0)).toBeNull();
  });

  it('`*` stands for one segment, never more or fewer', () => {
    expect(listed('Beta', 3, 'topics.*.partitions.*.errorCode', 3, 0)).toBeNull();
    expect(listed('Beta', 3, 'topics.errorCode', 3, 0)).toBeNull();
  });

  it('a value pair accepts only those values; `*` on one side accepts any value there; a missing or null side is "absent"', () => {
    expect(listed('Beta', 1, 'topics.*.partitions.*.errorCode', -1, 3)).toBe('kafka -1, any fjord value');
    expect(listed('Beta', 1, 'topics.*.partitions.*.errorCode', -1, 0)).toBe('kafka -1, any fjord value');
    expect(listed('Beta', 1, 'topics.*.partitions.*.errorCode', 3, -1)).toBeNull();
    expect(listed('Beta', 1, 'topics.*.name', 'x', undefined)).toBe('fjord has no name');
    expect(listed('Beta', 1, 'topics.*.name', 'x', null)).toBe('fjord has no name');
    expect(listed('Beta', 1, 'topics.*.name', 'x', '')).toBeNull();
  });

  it('`a.b.**` accepts a.b itself and everything under it, whole segments only, though config names hold dots', () => {
    const key = (name: string): string => `results.*.configs.${name}`;
    expect(listed('Gamma', 4, key('controller.quorum.voters'), 'present', undefined)).toBe('kafka-only keys under controller.quorum');
    expect(listed('Gamma', 4, key('controller.quorum.fetch.timeout.ms'), 'present', undefined)).toBe('kafka-only keys under controller.quorum');
    expect(listed('Gamma', 4, key('controller.quorum'), 'present', undefined)).toBe('kafka-only keys under controller.quorum');
    expect(listed('Gamma', 4, key('controller.quorumx'), 'present', undefined)).toBeNull();
    expect(listed('Gamma', 4, key('controller'), 'present', undefined)).toBeNull();
    expect(listed('Gamma', 4, 'results.*.configs', 'present', undefined)).toBeNull();
    // The value pair still applies under the prefix.
    expect(listed('Gamma', 4, key('controller.quorum.voters'), undefined, 'present')).toBeNull();
    expect(listed('Gamma', 4, key('log.retention.ms.readOnly'), true, false)).toBe('readOnly under log.');
    expect(listed('Gamma', 4, key('log.retention.ms.readOnly'), false, true)).toBeNull();
  });

  it("the broker config listings built by class of key accept only their own direction", () => {
    expect(fuzzKnownDifference('DescribeConfigs', 4, 'results.*.configs.remote.log.storage.system.enable', 'present', undefined)).not.toBeNull();
    expect(fuzzKnownDifference('DescribeConfigs', 4, 'results.*.configs.remote.log.storage.system.enable', undefined, 'present')).toBeNull();
    expect(fuzzKnownDifference('DescribeConfigs', 4, 'results.*.configs.mirror.fetch.max.bytes', undefined, 'present')).not.toBeNull();
    expect(fuzzKnownDifference('DescribeConfigs', 4, 'results.*.configs.mirror.fetch.max.bytes', 'present', undefined)).toBeNull();
  });
});

describe('knownDifference (the scenario runner)', () => {
  const table = { 'java/produce:topics.*.partitions.*.errorCode': 'listed', 'java/produce:offset': 'listed offset' };
  it('matches the scenario id exactly and the path segment by segment', () => {
    expect(knownDifference('java/produce', 'topics.0.partitions.3.errorCode', table)).toBe('listed');
    expect(knownDifference('java/produce', 'topics.0.errorCode', table)).toBeNull();
    expect(knownDifference('java/produce-2', 'offset', table)).toBeNull();
    expect(knownDifference('java/produce', 'offset', table)).toBe('listed offset');
  });
});
