/**
 * KIP-848 regular-expression subscriptions over raw ConsumerGroupHeartbeat requests, against
 * Apache Kafka and against Fjord: which topics a `SubscribedTopicRegex` selects (RE2 syntax as
 * Kafka's RE2J reads it, whole-name matches, internal topics not left out) and which expressions
 * are refused with INVALID_REGULAR_EXPRESSION. Kafka's own replies are the expected ones.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeConsumerGroupHeartbeatRequest } from '../../src/protocol/generated/messages/consumer-group-heartbeat-request.js';
import { decodeConsumerGroupHeartbeatResponse, type ConsumerGroupHeartbeatResponse } from '../../src/protocol/generated/messages/consumer-group-heartbeat-response.js';
import { encodeCreateTopicsRequest } from '../../src/protocol/generated/messages/create-topics-request.js';
import { decodeCreateTopicsResponse } from '../../src/protocol/generated/messages/create-topics-response.js';
import { encodeFindCoordinatorRequest } from '../../src/protocol/generated/messages/find-coordinator-request.js';
import { decodeFindCoordinatorResponse } from '../../src/protocol/generated/messages/find-coordinator-response.js';
import { encodeMetadataRequest } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { WireClient } from '../broker/wire.js';
import { differentialTests, sharedKafka, useFjordNode, type Scenario } from './lib/scenario.js';

const fjord = useFjordNode();

interface RegexSeen {
  /** The first heartbeat's error (NONE, or why the regex was refused). */
  readonly error: string;
  /** Topics of the first non-empty assignment, the test's own topic named `T`. */
  readonly assigned: string[];
}

const errorName = (code: number): string => Object.entries(ErrorCode).find(([, c]) => c === code)?.[0] ?? String(code);

async function heartbeat(wire: WireClient, req: Parameters<typeof encodeConsumerGroupHeartbeatRequest>[1]): Promise<ConsumerGroupHeartbeatResponse> {
  return decodeConsumerGroupHeartbeatResponse(await wire.call(68, 1, (w) => encodeConsumerGroupHeartbeatRequest(w, req, 1)), 1);
}

/** Names of every topic by id, from a Metadata request for all topics. */
async function topicNames(wire: WireClient): Promise<Map<string, string>> {
  const md = decodeMetadataResponse(await wire.call(3, 12, (w) => encodeMetadataRequest(w, { topics: null, allowAutoTopicCreation: false }, 12)), 12);
  return new Map(md.topics.filter((t) => t.name !== null).map((t) => [t.topicId, t.name!]));
}

/**
 * Creates the topic, joins a fresh group subscribed to `regexOf(topic)`, and heartbeats until the
 * coordinator hands out an assignment (Kafka resolves a new regex asynchronously) or refuses it.
 */
async function subscribe(port: number, topic: string, regexOf: (topic: string) => string): Promise<RegexSeen> {
  const wire = await WireClient.connect(port);
  try {
    const created = decodeCreateTopicsResponse(
      await wire.call(19, 7, (w) => encodeCreateTopicsRequest(w, { topics: [{ name: topic, numPartitions: 2, replicationFactor: 1 }], timeoutMs: 30_000 }, 7)),
      7,
    ).topics[0]!;
    if (created.errorCode !== 0) throw new Error(`CreateTopics ${topic}: ${errorName(created.errorCode)}`);
    const groupId = `regex-${topic}`;
    const deadline = Date.now() + 30_000;
    // The offsets topic (and so the coordinator) may still be coming up on a fresh broker.
    for (;;) {
      const fc = decodeFindCoordinatorResponse(await wire.call(10, 4, (w) => encodeFindCoordinatorRequest(w, { keyType: 0, coordinatorKeys: [groupId] }, 4)), 4);
      if (fc.coordinators[0]!.errorCode === 0) break;
      if (Date.now() > deadline) throw new Error(`no coordinator for ${groupId}: ${errorName(fc.coordinators[0]!.errorCode)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const memberId = randomUUID();
    const regex = regexOf(topic);
    const join = (): Promise<ConsumerGroupHeartbeatResponse> =>
      heartbeat(wire, { groupId, memberId, memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicRegex: regex, topicPartitions: [] });
    let r = await join();
    // A coordinator still loading its offsets partition asks the member to come back.
    const loading: number[] = [ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE];
    while (loading.includes(r.errorCode) && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 200));
      r = await join();
    }
    const error = errorName(r.errorCode);
    if (r.errorCode !== 0) return { error, assigned: [] };
    // The assignment comes once the coordinator has resolved the regex, and is sent again only
    // when it changes: heartbeats go on until it holds the test's own topic (every case selects
    // it), and a moment longer.
    let latest: NonNullable<ConsumerGroupHeartbeatResponse['assignment']>['topicPartitions'] = [];
    let settleUntil = Number.POSITIVE_INFINITY;
    while (Date.now() < Math.min(deadline, settleUntil)) {
      const got = r.assignment?.topicPartitions;
      if (got !== undefined && got.length > 0) {
        latest = got;
        // Kafka resolves a regex against the metadata it has, and again at its refresh interval:
        // a topic created just before the join can come in a later assignment.
        if (settleUntil === Number.POSITIVE_INFINITY && got.some((tp) => tp.topicId === created.topicId)) settleUntil = Date.now() + 1_000;
      }
      await new Promise((res) => setTimeout(res, 200));
      r = await heartbeat(wire, { groupId, memberId, memberEpoch: r.memberEpoch, rebalanceTimeoutMs: -1, subscribedTopicRegex: null, topicPartitions: null });
      if (r.errorCode !== 0) throw new Error(`heartbeat failed: ${errorName(r.errorCode)} ${r.errorMessage ?? ''}`);
    }
    const names = await topicNames(wire);
    const assigned = latest.map((tp) => names.get(tp.topicId) ?? tp.topicId).map((n) => (n === topic ? 'T' : n)).sort();
    await heartbeat(wire, { groupId, memberId, memberEpoch: -1 });
    return { error, assigned };
  } finally {
    wire.close();
  }
}

interface RegexCase {
  readonly name: string;
  readonly regex: (topic: string) => string;
  readonly expected: RegexSeen;
}

const CASES: readonly RegexCase[] = [
  // RE2's inline flag; JavaScript's RegExp (before ES2025 modifiers) refuses `(?i)`.
  { name: 'inline-case-flag', regex: (t) => `(?i)${t.toUpperCase()}`, expected: { error: 'NONE', assigned: ['T'] } },
  // The whole name must match: a prefix of the topic selects nothing, the topic itself does.
  { name: 'whole-name', regex: (t) => `${t.slice(0, -2)}|${t}`, expected: { error: 'NONE', assigned: ['T'] } },
  // Internal topics are candidates like any other.
  { name: 'internal-topic', regex: (t) => `__consumer_offsets|${t}`, expected: { error: 'NONE', assigned: ['T', '__consumer_offsets'] } },
  // Lookaround and backreferences are not RE2.
  { name: 'lookahead-refused', regex: (t) => `${t}(?=x)`, expected: { error: 'INVALID_REGULAR_EXPRESSION', assigned: [] } },
  { name: 'backreference-refused', regex: (t) => `(${t})\\1`, expected: { error: 'INVALID_REGULAR_EXPRESSION', assigned: [] } },
];

describe('KIP-848 regex subscriptions (raw protocol)', () => {
  for (const c of CASES) {
    const scenario: Scenario<RegexSeen> = {
      id: `raw/consumer-regex-${c.name}`,
      run: (target, topic) => subscribe(target.port, topic, c.regex),
      check(obs) {
        expect(obs).toEqual(c.expected);
      },
      timeoutMs: 60_000,
    };
    differentialTests(scenario, sharedKafka, fjord);
  }
});
