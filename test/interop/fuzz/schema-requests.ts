/**
 * Requests generated from the JSON schemas in messages/ (the model codegen builds), with values a
 * broker tells apart: names from the sequence's own pool (existing, unknown, empty, oversized,
 * invalid), boundary numbers (0, -1, max), empty and null arrays and strings, unknown topic ids.
 * The generated codecs encode and decode them, so every field of every version is reachable.
 */
import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import { RECORD_BASE_TS } from './normalize.js';
import { join } from 'node:path';
import { buildModel, defaultOf, inRange, kebab, loadSpecs, typeNullable } from '../../../codegen/schema.mjs';
import type { FieldModel, FieldType, MessageModel, StructModel } from '../../../codegen/schema.mjs';
import type { Reader } from '../../../src/protocol/reader.js';
import type { Writer } from '../../../src/protocol/writer.js';
import { buildRecordBatch } from '../../../src/protocol/records.js';
import { ROOT } from '../lib/paths.js';

export type Value = unknown;
export type Input = Record<string, Value>;

export interface ApiCodec {
  readonly apiKey: number;
  readonly name: string;
  readonly request: MessageModel;
  encode(w: Writer, input: Input, version: number): void;
  decodeResponse(r: Reader, version: number): Input;
}

export const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
export const UNKNOWN_UUID = '5d1f3a2b-7c4e-4b8a-9f60-1e2d3c4b5a69';

const MODELS: Map<string, MessageModel> = (() => {
  const m = new Map<string, MessageModel>();
  for (const spec of loadSpecs(join(ROOT, 'messages'))) {
    const model = buildModel(spec);
    m.set(model.name, model);
  }
  return m;
})();

/** The request models by API key. */
export function requestModels(): Map<number, MessageModel> {
  const out = new Map<number, MessageModel>();
  for (const m of MODELS.values()) if (m.kind === 'request' && m.apiKey !== null) out.set(m.apiKey, m);
  return out;
}

const codecs = new Map<number, ApiCodec>();

/** The generated encoder of a request and decoder of its response, loaded by name. */
export async function codecFor(apiKey: number): Promise<ApiCodec> {
  const hit = codecs.get(apiKey);
  if (hit) return hit;
  const request = requestModels().get(apiKey);
  if (!request) throw new Error(`no request schema for API key ${apiKey}`);
  const base = request.name.replace(/Request$/, '');
  const reqMod = (await import(`../../../src/protocol/generated/messages/${kebab(request.name)}.ts`)) as Record<string, unknown>;
  const resMod = (await import(`../../../src/protocol/generated/messages/${kebab(`${base}Response`)}.ts`)) as Record<string, unknown>;
  const codec: ApiCodec = {
    apiKey,
    name: base,
    request,
    encode: reqMod[`encode${request.name}`] as ApiCodec['encode'],
    decodeResponse: resMod[`decode${base}Response`] as ApiCodec['decodeResponse'],
  };
  codecs.set(apiKey, codec);
  return codec;
}

/** Names a sequence may use; `own*` are fresh per sequence, so replays never see each other's state. */
export interface NamePool {
  readonly ownTopic: string;
  readonly fixtureTopic: string;
  readonly group: string;
  readonly transactionalId: string;
  readonly topicIds: readonly string[];
}

const OVERSIZED = 'o'.repeat(250);

function topicName(pool: NamePool): Arbitrary<string> {
  return fc.constantFrom(pool.ownTopic, pool.ownTopic, pool.fixtureTopic, pool.fixtureTopic, `${pool.ownTopic}-missing`, '', OVERSIZED, 'bad name!');
}

function int(bits: 8 | 16 | 32, extra: readonly number[] = []): Arbitrary<number> {
  const max = 2 ** (bits - 1) - 1;
  return fc.oneof(fc.constantFrom(0, -1, 1, max, -max - 1, ...extra), fc.integer({ min: -2, max: 5 }));
}

/** A small valid record batch (magic 2, CRC-32C) with a fixed timestamp, or bytes that are not one. */
function records(): Arbitrary<Buffer | null> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 1, max: 3 }).map((n) => buildRecordBatch({ records: Array.from({ length: n }, (_, i) => ({ value: Buffer.from(`v${i}`), timestamp: RECORD_BASE_TS + i })) })) },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) },
    { weight: 1, arbitrary: fc.constant(Buffer.from('not a record batch at all')) },
  );
}

/** A field's value in this version, by the field's meaning where its name says it. */
function primArb(prim: string, f: FieldModel, pool: NamePool): Arbitrary<Value> {
  const n = f.name;
  switch (prim) {
    case 'bool':
      return fc.boolean();
    case 'int8':
      return int(8);
    case 'int16':
      return /ErrorCode$/.test(n) ? fc.constantFrom(0, -1, 3) : int(16);
    case 'uint16':
      return fc.constantFrom(0, 1, 65535);
    case 'int32':
      if (/^(PartitionIndex|Partition|PartitionId|Partitions|Index)$/.test(n)) return fc.constantFrom(0, 1, -1, 99, 2147483647);
      if (/TimeoutMs$/.test(n)) return fc.constantFrom(0, -1, 5000, 5000, 5000);
      if (/(BrokerId|NodeId|ReplicaId|LeaderId)$/.test(n)) return fc.constantFrom(-1, 0, 1, 2, 1000);
      if (/Bytes$/.test(n)) return fc.constantFrom(0, 1, 1048576, 2147483647, -1);
      return int(32, [60_000]);
    case 'uint32':
      return fc.constantFrom(0, 1, 4294967295);
    case 'int64':
      if (/ProducerId$/.test(n)) return fc.constantFrom(-1n, 0n, 1n, 9_007_199_254n);
      if (/Offset$/.test(n)) return fc.constantFrom(-2n, -1n, 0n, 1n, 2n, 3n, 1000n, 2n ** 63n - 1n);
      if (/Timestamp$/.test(n)) return fc.constantFrom(-1n, -2n, -3n, -4n, -5n, 0n, BigInt(RECORD_BASE_TS + 1));
      return fc.constantFrom(-1n, 0n, 1n, 2n ** 63n - 1n, -(2n ** 63n));
    case 'float64':
      return fc.constantFrom(0, 1.5, -1);
    case 'string':
      if (/^(Name|Topic|TopicName)$/.test(n) && /topic/i.test(f.name + JSON.stringify(f.type))) return topicName(pool);
      if (/^Topic(Name)?$/.test(n)) return topicName(pool);
      if (/^Name$/.test(n)) return topicName(pool);
      if (/GroupId$/.test(n) || n === 'Groups' || n === 'Key') return fc.constantFrom(pool.group, pool.group, '', `${pool.group}-other`);
      if (/TransactionalId$/.test(n)) return fc.constantFrom(pool.transactionalId, pool.transactionalId, '', `${pool.transactionalId}-other`);
      if (/MemberId$/.test(n)) return fc.constantFrom('', 'unknown-member');
      if (/ProtocolType$/.test(n)) return fc.constantFrom('consumer', '', 'connect');
      if (/ResourceName$/.test(n)) return fc.constantFrom(pool.ownTopic, pool.fixtureTopic, '1', '', '*');
      if (/Principal$/.test(n)) return fc.constantFrom('User:alice', 'User:*', 'alice', '');
      if (/Host$/.test(n)) return fc.constantFrom('*', '127.0.0.1', '');
      return fc.constantFrom('', 'x', OVERSIZED.slice(0, 40));
    case 'uuid':
      return /TopicId$/.test(n) ? fc.constantFrom(ZERO_UUID, UNKNOWN_UUID, ...pool.topicIds) : fc.constantFrom(ZERO_UUID, UNKNOWN_UUID);
    case 'bytes':
      return fc.constantFrom(Buffer.alloc(0), Buffer.from('abc'));
    case 'records':
      return records();
    default:
      throw new Error(`no arbitrary for ${prim}`);
  }
}

function decodedDefault(f: FieldModel): Value {
  const d = defaultOf(f);
  switch (d.kind) {
    case 'number':
    case 'bigint':
    case 'bool':
    case 'string':
    case 'uuid':
      return d.value;
    case 'null':
      return null;
    case 'emptyBytes':
      return Buffer.alloc(0);
    case 'emptyArray':
      return [];
    case 'struct':
      return undefined;
  }
}

function typeArb(t: FieldType, f: FieldModel, version: number, pool: NamePool, depth: number): Arbitrary<Value> {
  if (t.kind === 'prim') return primArb(t.prim, f, pool);
  if (t.kind === 'struct') return structInput(t.struct, version, pool, depth + 1);
  // Arrays: mostly one or two elements, sometimes empty; nested arrays stay small.
  return fc.array(typeArb(t.elem, f, version, pool, depth + 1), { minLength: 0, maxLength: depth > 1 ? 1 : 2 }).map((a) => (a.length === 0 && depth === 0 ? a : a));
}

function fieldArb(f: FieldModel, version: number, pool: NamePool, depth: number): Arbitrary<Value> | null {
  if (!inRange(f.versions, version)) return null;
  const base = typeArb(f.type, f, version, pool, depth);
  const nullable = inRange(f.nullable, version) && typeNullable(f);
  const v = nullable ? fc.option(base, { nil: null, freq: 5 }) : base;
  // A tagged field is often absent, which is what most clients send.
  if (f.tagged !== null && inRange(f.tagged, version)) {
    const d = decodedDefault(f);
    return d === undefined ? v : fc.oneof(fc.constant(d), v);
  }
  return v;
}

/** An input object for a struct at a version: every field the version carries. */
export function structInput(st: StructModel, version: number, pool: NamePool, depth = 0): Arbitrary<Input> {
  const shape: Record<string, Arbitrary<Value>> = {};
  for (const f of st.fields) {
    const a = fieldArb(f, version, pool, depth);
    if (a !== null) shape[f.prop] = a;
  }
  return fc.record(shape);
}

/** A whole request body for `model` at `version`. */
export function requestInput(model: MessageModel, version: number, pool: NamePool): Arbitrary<Input> {
  return structInput(model.top, version, pool);
}
