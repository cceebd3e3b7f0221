/**
 * The differential fuzzer: sequences of requests (steps.ts) sent to a real Apache Kafka broker and
 * to Fjord with the same settings, answers compared after normalize.ts. fast-check drives it: a
 * sequence whose answers differ somewhere not yet reported (and not listed in
 * known-differences.ts) fails the property, fast-check shrinks it to a minimal sequence, the
 * finding is recorded, and the search goes on with the next seed until the time is up.
 */
import fc from 'fast-check';
import type { MessageModel } from '../../../codegen/schema.mjs';
import { encodeApiVersionsRequest } from '../../../src/protocol/generated/messages/api-versions-request.js';
import { decodeApiVersionsResponse } from '../../../src/protocol/generated/messages/api-versions-response.js';
import { encodeCreateTopicsRequest } from '../../../src/protocol/generated/messages/create-topics-request.js';
import { encodeFindCoordinatorRequest } from '../../../src/protocol/generated/messages/find-coordinator-request.js';
import { decodeFindCoordinatorResponse } from '../../../src/protocol/generated/messages/find-coordinator-response.js';
import { encodeProduceRequest } from '../../../src/protocol/generated/messages/produce-request.js';
import { decodeProduceResponse } from '../../../src/protocol/generated/messages/produce-response.js';
import { buildRecordBatch } from '../../../src/protocol/records.js';
import { fuzzKnownDifference } from '../known-differences.js';
import { FuzzConnection } from './connection.js';
import { SequenceRun, type BrokerUnderTest, type Names, type Outcome } from './executor.js';
import { diff, normalize, RECORD_BASE_TS, type Difference, type Json } from './normalize.js';
import { codecFor, requestInput, requestModels } from './schema-requests.js';
import { generatedPairs, PLACEHOLDER_POOL, sequenceArb, type Step } from './steps.js';

export interface Finding {
  /** `<Api> v<version>:<path>` plus the two values for a leaf: how findings are told apart. */
  readonly signature: string;
  readonly api: string;
  readonly version: number;
  readonly difference: Difference;
  /** The step that differed, as each broker received it. */
  readonly request: { readonly kafka: Json; readonly fjord: Json };
  readonly answers: { readonly kafka: Json; readonly fjord: Json };
  /** The shrunk sequence that reproduces it, as generated (placeholders unsubstituted). */
  readonly sequence: Json;
  readonly listed: string | null;
}

export interface FuzzStats {
  sequences: number;
  requests: number;
  /** `<key>v<version>` pairs sent at least once, of `pairs` possible. */
  covered: Set<string>;
  pairs: string[];
  served: Map<number, [number, number]>;
  onlyKafka: string[];
  onlyFjord: string[];
}

const FIXTURE = 'fz-fixture';
const FIXTURE_PARTITIONS = 2;

async function apiVersions(port: number): Promise<Map<number, [number, number]>> {
  const c = await FuzzConnection.open(port);
  try {
    const r = await c.call(18, 3, (w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'fjord-fuzz', clientSoftwareVersion: '1.0' }, 3));
    if (typeof r === 'string') throw new Error(`ApiVersions on ${port}: ${r}`);
    return new Map(decodeApiVersionsResponse(r, 3).apiKeys.map((k) => [k.apiKey, [k.minVersion, k.maxVersion] as [number, number]]));
  } finally {
    c.close();
  }
}

/** The fixture topic with three records, and group/transaction coordinators loaded, on one broker. */
async function prepare(broker: BrokerUnderTest): Promise<void> {
  const c = await FuzzConnection.open(broker.port);
  try {
    await c.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name: FIXTURE, numPartitions: FIXTURE_PARTITIONS, replicationFactor: 1 }], timeoutMs: 30_000 }, 7));
    const run = new SequenceRun(broker, { own: FIXTURE, fixture: FIXTURE, group: 'g', txn: 't' });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const md = await run.metadata([FIXTURE]);
      if (md?.topics[0]?.errorCode === 0 && md.topics[0].partitions.every((p) => p.leaderId >= 0)) break;
      if (Date.now() > deadline) throw new Error(`${broker.name}: fixture topic has no leader`);
      await new Promise((r) => setTimeout(r, 200));
    }
    run.close();
    const batch = buildRecordBatch({ records: [0, 1, 2].map((i) => ({ value: Buffer.from(`f${i}`), timestamp: RECORD_BASE_TS + i })) });
    // A new partition's leader can still answer NOT_LEADER_OR_FOLLOWER; nothing is written then.
    for (;;) {
      const r = await c.call(0, 11, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: FIXTURE, partitionData: [{ index: 0, records: batch }] }] }, 11));
      if (typeof r !== 'string' && decodeProduceResponse(r, 11).responses[0]?.partitionResponses[0]?.errorCode === 0) break;
      if (Date.now() > deadline) throw new Error(`${broker.name}: the fixture's records were not written`);
      await new Promise((res) => setTimeout(res, 200));
    }
    for (const keyType of [0, 1]) {
      for (;;) {
        const r = await c.call(10, 4, (w) => encodeFindCoordinatorRequest(w, { keyType, coordinatorKeys: ['warm-up'] }, 4));
        if (typeof r !== 'string' && decodeFindCoordinatorResponse(r, 4).coordinators[0]?.errorCode === 0) break;
        if (Date.now() > deadline) throw new Error(`${broker.name}: no coordinator for key type ${keyType}`);
        await new Promise((res) => setTimeout(res, 200));
      }
    }
  } finally {
    c.close();
  }
}

function outcomeJson(o: Outcome): Json {
  if (o.kind === 'answer') return normalize(o.body);
  if (o.kind === 'undecodable') return { undecodable: o.error };
  return `<${o.kind}>`;
}

/**
 * Answers that list everything the broker has (all topics, groups, transactions) keep only this
 * sequence's own entries, the fixture and the internal topics: what other sequences left behind
 * is compared when those sequences run.
 */
function ownEntries(j: Json, id: string, all: boolean): Json {
  if (Array.isArray(j)) return j.map((x) => ownEntries(x, id, all)).filter((x) => x !== DROPPED);
  if (j === null || typeof j !== 'object') return j;
  for (const k of ['name', 'groupId', 'transactionalId', 'topic', 'resourceName']) {
    const v = j[k];
    const mine = (x: string): boolean => [`fz-${id}`, `fzg-${id}`, `fzt-${id}`].some((m) => x === m || x.startsWith(`${m}-`));
    // In a list-everything answer, anything another sequence may have created (odd names
    // included) goes; elsewhere only other sequences' own names do.
    if (typeof v === 'string' && v !== FIXTURE && !mine(v) && (all ? !v.startsWith('__') : /^fz[gt]?-/.test(v))) return DROPPED;
    // Share groups are off in Kafka 4.1.2, so only Fjord has their state topic (by design).
    if (all && v === '__share_group_state') return DROPPED;
  }
  const out: { [k: string]: Json } = {};
  for (const [k, v] of Object.entries(j)) out[k] = ownEntries(v, id, all);
  return out;
}

/** Requests whose answer lists everything the broker has rather than what was asked. */
function listsEverything(step: Step): boolean {
  const topics = step.input['topics'];
  if (step.apiKey === 3) return topics === null || topics === undefined || (step.version === 0 && Array.isArray(topics) && topics.length === 0);
  if (step.apiKey === 75) return Array.isArray(topics) && topics.length === 0;
  return [16, 66, 74].includes(step.apiKey);
}
const DROPPED = '<other sequence>';

function signatureOf(api: string, version: number, d: Difference): string {
  const leaf = (x: Json | undefined): string => (x === undefined ? 'absent' : typeof x === 'object' && x !== null ? 'object' : JSON.stringify(x).slice(0, 40));
  return `${api} v${version}:${d.pattern}=${leaf(d.kafka)}|${leaf(d.fjord)}`;
}

export interface FuzzOptions {
  readonly kafka: BrokerUnderTest;
  readonly fjord: BrokerUnderTest;
  readonly seed: number;
  readonly timeLimitMs: number;
  /** Longest sequence generated. */
  readonly maxSteps?: number;
  /**
   * Random sequences run at most (shrinking runs included), so a fixed seed explores the same
   * sequences however fast the machine is; the time limit still ends the run first if it must.
   */
  readonly maxSequences?: number;
  readonly log?: (line: string) => void;
}

export interface FuzzResult {
  readonly stats: FuzzStats;
  readonly findings: Finding[];
}

export async function runDifferentialFuzz(opts: FuzzOptions): Promise<FuzzResult> {
  const log = opts.log ?? (() => undefined);
  const started = Date.now();
  const [kafkaVersions, fjordVersions] = await Promise.all([apiVersions(opts.kafka.port), apiVersions(opts.fjord.port)]);
  const served = new Map<number, [number, number]>();
  for (const [k, [klo, khi]] of kafkaVersions) {
    const f = fjordVersions.get(k);
    if (f && Math.max(klo, f[0]) <= Math.min(khi, f[1])) served.set(k, [Math.max(klo, f[0]), Math.min(khi, f[1])]);
  }
  const models = requestModels();
  for (const k of served.keys()) await codecFor(k);
  const stats: FuzzStats = {
    sequences: 0,
    requests: 0,
    covered: new Set(),
    pairs: generatedPairs(models as ReadonlyMap<number, MessageModel>, served),
    served,
    onlyKafka: [...kafkaVersions.keys()].filter((k) => !fjordVersions.has(k)).map(String),
    onlyFjord: [...fjordVersions.keys()].filter((k) => !kafkaVersions.has(k)).map(String),
  };
  await Promise.all([prepare(opts.kafka), prepare(opts.fjord)]);

  const findings: Finding[] = [];
  const reported = new Set<string>();
  let runId = 0;

  /** Runs a sequence on both brokers; returns the differences that are neither listed nor reported yet. */
  const runSequence = async (steps: Step[], record: boolean): Promise<{ fresh: Finding[] }> => {
    const id = `${opts.seed}-${++runId}`;
    const names: Names = { own: `fz-${id}`, fixture: FIXTURE, group: `fzg-${id}`, txn: `fzt-${id}` };
    const kafka = new SequenceRun(opts.kafka, names);
    const fjord = new SequenceRun(opts.fjord, names);
    const fresh: Finding[] = [];
    try {
      for (const step of steps) {
        const codec = await codecFor(step.apiKey);
        const [k, f] = await Promise.all([kafka.send(step), fjord.send(step)]);
        if (record) stats.covered.add(`${step.apiKey}v${step.version}`);
        const all = listsEverything(step);
        const kj = ownEntries(outcomeJson(k.outcome), id, all);
        const fj = ownEntries(outcomeJson(f.outcome), id, all);
        for (const d of diff(kj, fj)) {
          const signature = signatureOf(codec.name, step.version, d);
          const listed = fuzzKnownDifference(codec.name, step.version, d.pattern, d.kafka, d.fjord);
          if (reported.has(signature) || listed !== null) continue;
          fresh.push({
            signature,
            api: codec.name,
            version: step.version,
            difference: d,
            request: { kafka: normalize(k.sent), fjord: normalize(f.sent) },
            answers: { kafka: kj, fjord: fj },
            sequence: normalize(steps),
            listed,
          });
        }
        if (fresh.length > 0) break;
      }
    } finally {
      if (record) {
        stats.sequences++;
        stats.requests += kafka.requests + fjord.requests;
      }
      kafka.close();
      fjord.close();
    }
    return { fresh };
  };

  const keep = (found: Finding[]): void => {
    for (const f of found) {
      if (reported.has(f.signature)) continue;
      reported.add(f.signature);
      findings.push(f);
      log(`difference ${f.signature} (sequence of ${(f.sequence as Json[]).length} steps)`);
    }
  };

  // First a sweep: one generated request at every version of every key both serve, so each
  // (key, version) pair is covered whatever the time budget; a one-step sequence is already minimal.
  for (const pair of stats.pairs) {
    const [key, version] = pair.split('v').map(Number) as [number, number];
    const [input] = fc.sample(requestInput(models.get(key)!, version, PLACEHOLDER_POOL), { seed: opts.seed + key * 100 + version, numRuns: 1 });
    keep((await runSequence([{ apiKey: key, version, input: input!, origin: 'sweep' }], true)).fresh);
  }

  const arb = sequenceArb(models as ReadonlyMap<number, MessageModel>, served, opts.maxSteps ?? 8);
  for (let round = 0; ; round++) {
    const left = opts.timeLimitMs - (Date.now() - started);
    const runs = (opts.maxSequences ?? Number.MAX_SAFE_INTEGER) - (stats.sequences - stats.pairs.length);
    if (left <= 1000 || runs <= 0) break;
    let last: Finding[] = [];
    const result = await fc.check(
      fc.asyncProperty(arb, async (steps) => {
        const { fresh } = await runSequence(steps, true);
        if (fresh.length > 0) last = fresh;
        return fresh.length === 0;
      }),
      { seed: opts.seed + round, numRuns: Math.min(runs, 1_000_000), interruptAfterTimeLimit: left, markInterruptAsFailure: false, endOnFailure: false },
    );
    if (!result.failed) break;
    // The last failing run during shrinking is the minimal one fast-check settled on.
    const minimal = result.counterexample?.[0] as Step[] | undefined;
    if (minimal) {
      const again = await runSequence(minimal, false);
      if (again.fresh.length > 0) last = again.fresh;
    }
    keep(last);
    if (last.length === 0) break;
  }
  return { stats, findings };
}
