import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';
import { defaultOf, inRange, typeNullable } from '../../../codegen/schema.mjs';
import type { FieldModel, FieldType, MessageModel, StructModel } from '../../../codegen/schema.mjs';

// Values in decoded form, derived from the schema model at test time: what encode accepts and
// what decode must give back.
type Value = unknown;

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

function hex(b: Uint8Array): string {
  const h = Buffer.from(b).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const PRIM: Record<string, () => Arbitrary<Value>> = {
  bool: () => fc.boolean(),
  int8: () => fc.integer({ min: -128, max: 127 }),
  int16: () => fc.integer({ min: -32768, max: 32767 }),
  uint16: () => fc.integer({ min: 0, max: 65535 }),
  int32: () => fc.integer({ min: -2147483648, max: 2147483647 }),
  uint32: () => fc.integer({ min: 0, max: 4294967295 }),
  int64: () => fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  float64: () => fc.double(),
  string: () => fc.string({ unit: 'grapheme', maxLength: 6 }),
  uuid: () => fc.oneof(fc.constant(ZERO_UUID), fc.uint8Array({ minLength: 16, maxLength: 16 }).map(hex)),
  bytes: () => fc.uint8Array({ maxLength: 8 }).map((a) => Buffer.from(a)),
  records: () => fc.uint8Array({ maxLength: 24 }).map((a) => Buffer.from(a)),
};

/** The decoded default of a field (what decode yields when the version lacks it). */
export function defaultValue(f: FieldModel): Value {
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
      return defaultStruct(d.struct);
  }
}

function defaultStruct(st: StructModel): Record<string, Value> {
  const o: Record<string, Value> = {};
  for (const f of st.fields) o[f.prop] = defaultValue(f);
  return o;
}

function typeArb(t: FieldType, m: MessageModel, version: number, depth: number): Arbitrary<Value> {
  if (t.kind === 'prim') {
    const make = PRIM[t.prim];
    if (!make) throw new Error(`no arbitrary for ${t.prim}`);
    return make();
  }
  if (t.kind === 'struct') return structArb(t.struct, m, version, depth + 1);
  return fc.array(typeArb(t.elem, m, version, depth + 1), { maxLength: depth > 2 ? 1 : 2 });
}

function fieldArb(f: FieldModel, m: MessageModel, version: number, depth: number): Arbitrary<Value> {
  if (!inRange(f.versions, version)) return fc.constant(defaultValue(f));
  const base = typeArb(f.type, m, version, depth);
  const nullable = inRange(f.nullable, version) && typeNullable(f);
  // tagged fields are often left at their default, which must round-trip too
  const withNull = nullable ? fc.option(base, { nil: null, freq: 3 }) : base;
  return f.tagged !== null && inRange(f.tagged, version) ? fc.oneof(fc.constant(defaultValue(f)), withNull) : withNull;
}

const UNKNOWN_TAGS = fc.option(
  fc.uniqueArray(fc.tuple(fc.integer({ min: 1000, max: 1010 }), fc.uint8Array({ maxLength: 4 })), { maxLength: 2, selector: (e) => e[0] }),
  { nil: undefined, freq: 2 },
);

export function structArb(st: StructModel, m: MessageModel, version: number, depth = 0): Arbitrary<Record<string, Value>> {
  const shape: Record<string, Arbitrary<Value>> = {};
  for (const f of st.fields) shape[f.prop] = fieldArb(f, m, version, depth);
  const flexible = m.flexibleFrom >= 0 && version >= m.flexibleFrom;
  const record = fc.record(shape);
  if (!flexible) return record;
  return fc.tuple(record, UNKNOWN_TAGS).map(([o, tags]) => {
    if (tags !== undefined && tags.length > 0) {
      const map = new Map<number, Buffer>();
      for (const [tag, bytes] of [...tags].sort((a, b) => a[0] - b[0])) map.set(tag, Buffer.from(bytes));
      (o as Record<string, Value>)['unknownTaggedFields'] = map;
    }
    return o;
  });
}
