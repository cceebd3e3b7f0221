/** The differential runner's comparison: what it reports as a difference, and what it lets through. */
import { describe, expect, test } from 'vitest';
import { diffObservations, formatDiff } from './lib/differential.js';
import { knownDifference } from './known-differences.js';

describe('differential comparison', () => {
  test('equal observations give no differences', () => {
    const obs = { offsets: ['0:0', '1:0'], configs: { 'retention.ms': '1 (DEFAULT_CONFIG)' }, error: 'NONE' };
    expect(diffObservations('java/x', obs, structuredClone(obs))).toEqual([]);
  });

  test('reports each differing leaf by its dotted path, array lengths included', () => {
    const kafka = { consumed: [{ offset: 0, value: 'a' }, { offset: 1, value: 'b' }], error: 'TopicExistsException' };
    const fjord = { consumed: [{ offset: 0, value: 'a' }], error: 'UnknownServerException', extra: true };
    const diffs = diffObservations('java/x', kafka, fjord);
    expect(diffs.map((d) => [d.path, d.kafka, d.fjord])).toEqual([
      ['consumed.length', '2', '1'],
      ['consumed.1', '{"offset":1,"value":"b"}', '(absent)'],
      ['error', '"TopicExistsException"', '"UnknownServerException"'],
      ['extra', '(absent)', 'true'],
    ]);
    expect(diffs.every((d) => d.accepted === null)).toBe(true);
    expect(formatDiff(diffs)).toContain('! error: kafka="TopicExistsException" fjord="UnknownServerException"');
  });

  test('known differences match by scenario and path, with * for one segment', () => {
    const table = { 'java/admin:configs.*': 'why', 'kcat/metadata:brokers.0.id': 'because' };
    expect(knownDifference('java/admin', 'configs.segment.bytes', table)).toBeNull();
    expect(knownDifference('java/admin', 'configs.x', table)).toBe('why');
    expect(knownDifference('java/group', 'configs.x', table)).toBeNull();
    expect(knownDifference('kcat/metadata', 'brokers.0.id', table)).toBe('because');
    expect(knownDifference('kcat/metadata', 'brokers.1.id', table)).toBeNull();
  });
});
