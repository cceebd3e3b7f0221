import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildModel, camel, kebab, loadSpecs, parseVersions } from '../../../codegen/schema.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('schema model', () => {
  it('names properties by lower-casing the leading capital run', () => {
    expect(camel('TopicData')).toBe('topicData');
    expect(camel('ThrottleTimeMs')).toBe('throttleTimeMs');
    expect(camel('ISRNodes')).toBe('isrNodes');
    expect(camel('IsrNodes')).toBe('isrNodes');
    expect(camel('timeoutMs')).toBe('timeoutMs');
    expect(camel('ID')).toBe('id');
  });

  it('names files in kebab case', () => {
    expect(kebab('ProduceRequest')).toBe('produce-request');
    expect(kebab('LastMirrorEpochsKey')).toBe('last-mirror-epochs-key');
  });

  it('parses version ranges', () => {
    expect(parseVersions('3+')).toEqual([3, Infinity]);
    expect(parseVersions('1-4')).toEqual([1, 4]);
    expect(parseVersions('7')).toEqual([7, 7]);
    expect(parseVersions('none')).toBeNull();
    expect(() => parseVersions('x')).toThrow();
  });

  it('gives every message a distinct file and every generated type a distinct name', () => {
    const models = loadSpecs(join(root, 'messages')).map(buildModel);
    const files = new Set(models.map((m) => kebab(m.name)));
    expect(files.size).toBe(models.length);
    const types = new Set<string>();
    for (const m of models) {
      for (const st of m.structs) {
        for (const t of [st.tsName, `${st.tsName}Input`]) {
          expect(types.has(t), t).toBe(false);
          types.add(t);
        }
      }
    }
  });

  it('rejects a tag reused within a struct', () => {
    const spec = {
      name: 'BadRequest',
      type: 'request',
      apiKey: 999,
      validVersions: '0',
      flexibleVersions: '0+',
      fields: [
        { name: 'A', type: 'int32', versions: '0+', taggedVersions: '0+', tag: 0 },
        { name: 'B', type: 'int32', versions: '0+', taggedVersions: '0+', tag: 0 },
      ],
    };
    expect(() => buildModel(spec)).toThrow(/tag 0 reused/);
  });
});
