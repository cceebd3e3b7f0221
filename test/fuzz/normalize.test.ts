/**
 * What the differential fuzzer (test/interop/fuzz/normalize.ts) takes out of an answer before it
 * compares Kafka's and Fjord's. Kept out of test/interop/ so it runs in the unit tier.
 */
import { expect, it } from 'vitest';
import { diff, normalize } from '../interop/fuzz/normalize.js';

it("a config key's documentation is compared by whether there is some, not by its words", () => {
  const answer = (documentation: string | null) => ({ results: [{ resourceName: 't', configs: [{ name: 'retention.ms', value: '1', documentation }] }] });
  expect(diff(normalize(answer('Kafka words.')), normalize(answer('Fjord words.')))).toEqual([]);
  expect(diff(normalize(answer('Kafka words.')), normalize(answer(null))).map((d) => [d.pattern, d.kafka, d.fjord])).toEqual([['results.*.configs.retention.ms.documentation', '<documentation>', null]]);
  // Other strings are still compared as they are.
  expect(diff(normalize({ name: 'a' }), normalize({ name: 'b' })).map((d) => d.path)).toEqual(['name']);
});
