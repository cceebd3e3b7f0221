/**
 * Scenarios known to fail against Fjord, each with the reason seen in its run. The harness asserts
 * that each one still fails; one that starts passing fails its test with "now passes, remove from
 * the list", so this list only ever shrinks as the node grows. Keys are `<client>/<scenario>`.
 * Last measured against the node at commit time; the differential report shows the current state.
 */
export const EXPECTED_FAILURES: Readonly<Record<string, string>> = {
};

/** librdkafka test numbers (from the allow-list in librdkafka-suite.ts) expected to fail against Fjord. */
export const LIBRDKAFKA_EXPECTED_FAILURES: Readonly<Record<string, string>> = {
};

/**
 * franz-go kgo tests (by test name) that pass against Apache Kafka but are known to fail against
 * Fjord, each with the reason. Empty: every kgo test that passes on Kafka passes on Fjord.
 */
export const FRANZ_GO_EXPECTED_FAILURES: Readonly<Record<string, string>> = {};
