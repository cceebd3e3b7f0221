// Our schemas and codecs against Kafka 4.4.0's own generated Java classes, live: random encodings
// of every message at every version go through `new XData(readable, version)` and `write`, and
// the version ranges and the Errors table come from the same jars. The JDK and the 4.4.0
// classpath are installed by test/interop/setup.sh (npm test's pretest step).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildModel, loadSpecs } from '../../../codegen/schema.mjs';
import { ERRORS } from '../../../src/protocol/generated/errors.js';
import { crossCheckSamples } from './java-cross-check/samples.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../../..');
const KAFKA_VERSION = '4.4.0';
const CLASSPATH = join(root, `.cache/interop/kafka-${KAFKA_VERSION}.classpath`);

// Versions the KIP-1279 design adds past upstream's newest (messages/README.md): Kafka reads
// them as unknown versions, so they prove nothing there.
const KIP_1279_VERSIONS: Record<string, number> = {
  FetchRequest: 19,
  FetchResponse: 19,
  CreateTopicsRequest: 8,
  CreateTopicsResponse: 8,
  PartitionChangeRecord: 3,
};
// Messages Kafka has no class for: the KIP-1279 RPCs and records, and SubscriptionInfoData,
// which lives in kafka-streams.
const MIRROR_RPCS = ['CreateClusterMirror', 'DeleteClusterMirror', 'DescribeClusterMirrors', 'ListClusterMirrors', 'StartMirrorTopics', 'StopMirrorTopics', 'PauseMirrorTopics', 'ResumeMirrorTopics', 'ReadMirrorStates', 'WriteMirrorStates', 'BumpLeaderEpochs'];
const NO_KAFKA_CLASS = [
  ...MIRROR_RPCS.flatMap((n) => [`${n}Request`, `${n}Response`]),
  'LastMirrorEpochsKey', 'LastMirrorEpochsValue', 'MirrorPartitionStateKey', 'MirrorPartitionStateValue',
  'MirrorPidResetRecord', 'MirrorTopicStateChangeRecord', 'SubscriptionInfoData',
].sort();

interface CrossCheckResult {
  ok: string[];
  mismatch: string[];
  newerThanKafka: string[];
  noJavaClass: string[];
  kafkaVersions: Record<string, [number, number]>;
  errors: [number, string, boolean][];
}

const ours = new Map(loadSpecs(join(root, 'messages')).map(buildModel).map((m) => [m.name, m]));
let result: CrossCheckResult;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fjord-cross-check-'));
  const samples = join(dir, 'samples.jsonl');
  writeFileSync(samples, (await crossCheckSamples(6)).join('\n') + '\n');
  const classpath = readFileSync(CLASSPATH, 'utf8').trim();
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      'java',
      ['-Xmx512m', '-XX:TieredStopAtLevel=1', '-cp', classpath, join(here, 'java-cross-check/CrossCheck.java'), samples],
      { timeout: 150_000, maxBuffer: 64 << 20 },
      (err, out, errOut) => (err ? reject(new Error(`CrossCheck failed: ${err.message}\n${errOut.slice(-2000)}`)) : resolve(out)),
    );
  });
  const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (line === undefined) throw new Error(`CrossCheck printed no RESULT line:\n${stdout.slice(-2000)}`);
  result = JSON.parse(line.slice('RESULT '.length)) as CrossCheckResult;
}, 240_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe(`schemas and codecs against Kafka ${KAFKA_VERSION}'s generated classes`, () => {
  it('has every message Kafka ships, with the same version range (KIP-1279 extensions aside)', () => {
    expect(Object.keys(result.kafkaVersions).length).toBeGreaterThan(250);
    const wrong: string[] = [];
    for (const [name, [lo, hi]] of Object.entries(result.kafkaVersions)) {
      const m = ours.get(name);
      const want = `${lo}-${KIP_1279_VERSIONS[name] ?? hi}`;
      if (m === undefined) wrong.push(`${name}: missing (Kafka ${lo}-${hi})`);
      else if (`${m.min}-${m.max}` !== want) wrong.push(`${name}: ours ${m.min}-${m.max}, want ${want}`);
    }
    expect(wrong).toEqual([]);
    const extra = [...ours.keys()].filter((n) => result.kafkaVersions[n] === undefined).sort();
    expect(extra).toEqual(NO_KAFKA_CLASS);
    expect(result.noJavaClass).toEqual(NO_KAFKA_CLASS);
  });

  it('Kafka reads every sample of every version it knows completely and writes back the same bytes', () => {
    // PartitionChangeRecord v3 is the KIP-1279 version; Kafka 4.4 stops at v2 yet reads v3 as if
    // it were its own, with other tags.
    expect(result.mismatch).toEqual(['PartitionChangeRecord v3']);
    expect(result.newerThanKafka.sort()).toEqual(Object.entries(KIP_1279_VERSIONS).map(([n, v]) => `${n} v${v}`).sort());
    const ok = new Set(result.ok);
    const unverified: string[] = [];
    for (const [name, [lo, hi]] of Object.entries(result.kafkaVersions)) {
      for (let v = lo; v <= hi; v++) if (!ok.has(`${name} v${v}`)) unverified.push(`${name} v${v}`);
    }
    expect(unverified).toEqual([]);
  });

  it("has Kafka's error codes, names and retriability", () => {
    expect(result.errors.length).toBeGreaterThan(130);
    const wrong: string[] = [];
    for (const [code, name, retriable] of result.errors) {
      const e = ERRORS.get(code);
      if (e?.name !== name || e.retriable !== retriable) wrong.push(`${code}: Kafka ${name} retriable=${retriable}, ours ${e?.name} retriable=${e?.retriable}`);
    }
    expect(wrong).toEqual([]);
    // Fjord's KIP-1279 codes start past Kafka's highest.
    const kafkaMax = Math.max(...result.errors.map(([c]) => c));
    expect([...ERRORS.keys()].filter((c) => c > kafkaMax).every((c) => c >= 137)).toBe(true);
  });
});
