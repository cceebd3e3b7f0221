/** Where the interop suite finds what `test/interop/setup.sh` installed (all under the ignored .cache/). */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const CACHE = join(ROOT, '.cache');
export const OUT = join(CACHE, 'interop');
export const REPORT_DIR = join(OUT, 'report');
export const LOG4J2_CONFIG = join(ROOT, 'test/interop/java/log4j2.properties');
export const VENV_PYTHON = join(CACHE, 'venv/bin/python');
export const LIBRDKAFKA_TREE = join(CACHE, 'librdkafka/package/deps/librdkafka');
export const JAVA_SCENARIOS_JAR = join(OUT, 'java-scenarios-target/java-scenarios-1.jar');
export const STREAMS_SCENARIOS_JAR = join(OUT, 'streams-scenarios-target/streams-scenarios-1.jar');

/** The Kafka versions setup.sh resolves: the 4.1 line, and the newest 4.x Maven Central served. */
export const KAFKA_VERSION = '4.1.2';
export const KAFKA_NEWEST_VERSION = '4.4.0';

function readClasspath(file: string): string {
  if (!existsSync(file)) throw new Error(`${file} is missing: run bash test/interop/setup.sh first`);
  return readFileSync(file, 'utf8').trim();
}

export function kafkaClasspath(version: string): string {
  return readClasspath(join(OUT, `kafka-${version}.classpath`));
}

/**
 * kafka-clients + kafka-tools + the scenario program. With a Kafka version, the scenario program
 * (built against kafka-clients 4.1) runs on that version's kafka-clients instead, taken from the
 * broker classpath setup.sh resolves for it: it uses only kafka-clients' public API.
 */
export function clientsClasspath(kafkaClientsVersion?: string): string {
  if (kafkaClientsVersion !== undefined) return `${JAVA_SCENARIOS_JAR}:${kafkaClasspath(kafkaClientsVersion)}`;
  return `${JAVA_SCENARIOS_JAR}:${readClasspath(join(OUT, 'java-scenarios.classpath'))}`;
}

/** kafka-streams + kafka-tools 4.4 + the Kafka Streams scenario (WordCount), as setup.sh builds them. */
export function streamsClasspath(): string {
  return `${STREAMS_SCENARIOS_JAR}:${readClasspath(join(OUT, 'streams-scenarios.classpath'))}`;
}

/** franz-go's version whose kgo tests setup.sh compiles, its test binary, and the package it runs in. */
export const FRANZ_GO_VERSION = 'v1.22.3';
export const FRANZ_GO_TEST_BINARY = join(CACHE, `franz-go/kgo-${FRANZ_GO_VERSION}.test`);
export const FRANZ_GO_KGO_DIR = join(CACHE, 'franz-go/src/pkg/kgo');
