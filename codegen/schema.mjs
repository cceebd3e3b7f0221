// Loads messages/*.json into a normalized model shared by the generator and the tests.
// Version ranges are clipped to the message's valid versions; an empty range is null.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseJsonc } from './jsonc.mjs';

export const PRIMITIVES = new Set(['bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64', 'string', 'bytes', 'records', 'uuid']);

/** "3+", "1-4", "7", "none" → [lo, hi] (hi may be Infinity) or null. */
export function parseVersions(s) {
  if (s === undefined || s === null) return null;
  const t = String(s).trim();
  if (t === 'none' || t === '') return null;
  let m = /^(\d+)\+$/.exec(t);
  if (m) return [Number(m[1]), Infinity];
  m = /^(\d+)-(\d+)$/.exec(t);
  if (m) return [Number(m[1]), Number(m[2])];
  m = /^(\d+)$/.exec(t);
  if (m) return [Number(m[1]), Number(m[1])];
  throw new Error(`bad version range ${JSON.stringify(s)}`);
}

export function intersect(a, b) {
  if (!a || !b) return null;
  const lo = Math.max(a[0], b[0]);
  const hi = Math.min(a[1], b[1]);
  return lo > hi ? null : [lo, hi];
}

export function inRange(range, v) {
  return range !== null && v >= range[0] && v <= range[1];
}

/** Schema field name → property name: `TopicData` → `topicData`, `ISRNodes` → `isrNodes`. */
export function camel(name) {
  const run = /^[A-Z]+/.exec(name)?.[0];
  if (!run) return name;
  if (run.length === name.length) return name.toLowerCase();
  if (run.length === 1) return run.toLowerCase() + name.slice(1);
  if (/[a-z]/.test(name[run.length])) return run.slice(0, -1).toLowerCase() + name.slice(run.length - 1);
  return run.toLowerCase() + name.slice(run.length);
}

/** `ProduceRequest` → `produce-request`, `LastMirrorEpochsKey` → `last-mirror-epochs-key`. */
export function kebab(name) {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

export function loadSpecs(dir) {
  const out = [];
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.json') || f === 'errors.json') continue;
    const spec = parseJsonc(readFileSync(join(dir, f), 'utf8'));
    if (`${spec.name}.json` !== f) throw new Error(`${f}: file name must be the message name ${spec.name}`);
    out.push(spec);
  }
  return out;
}

export function buildModel(spec) {
  const valid = parseVersions(spec.validVersions);
  if (!valid) throw new Error(`${spec.name}: no valid versions`);
  const flexible = intersect(parseVersions(spec.flexibleVersions), valid);
  const msg = {
    name: spec.name,
    kind: spec.type,
    apiKey: spec.apiKey ?? null,
    min: valid[0],
    max: valid[1],
    flexibleFrom: flexible ? flexible[0] : -1,
    listeners: spec.listeners ?? [],
    latestVersionUnstable: spec.latestVersionUnstable === true,
    structs: [],
    top: null,
  };
  const byName = new Map();
  const common = new Map((spec.commonStructs ?? []).map((s) => [s.name, s]));

  const makeStruct = (schemaName, fields, tsName) => {
    const st = { schemaName, tsName, fields: [] };
    if (byName.has(tsName)) throw new Error(`${spec.name}: struct ${schemaName} defined twice`);
    byName.set(tsName, st);
    msg.structs.push(st);
    const props = new Set();
    for (const f of fields) {
      const field = makeField(f);
      if (props.has(field.prop)) throw new Error(`${spec.name}.${schemaName}: duplicate property ${field.prop}`);
      props.add(field.prop);
      st.fields.push(field);
    }
    return st;
  };

  const resolveType = (typeStr, f) => {
    const isArray = typeStr.startsWith('[]');
    const base = isArray ? typeStr.slice(2) : typeStr;
    let t;
    if (PRIMITIVES.has(base)) {
      if (f.fields) throw new Error(`${spec.name}.${f.name}: primitive with fields`);
      t = { kind: 'prim', prim: base };
    } else {
      const tsName = spec.name + base;
      let st = byName.get(tsName);
      if (f.fields) {
        if (st) throw new Error(`${spec.name}: struct ${base} defined twice`);
        st = makeStruct(base, f.fields, tsName);
      } else if (!st) {
        const cs = common.get(base);
        if (!cs) throw new Error(`${spec.name}.${f.name}: unknown type ${base}`);
        st = makeStruct(base, cs.fields, tsName);
      }
      t = { kind: 'struct', struct: st };
    }
    return isArray ? { kind: 'array', elem: t } : t;
  };

  const makeField = (f) => {
    const versions = intersect(parseVersions(f.versions ?? f.taggedVersions), valid);
    const tagged = intersect(parseVersions(f.taggedVersions), valid);
    if (f.taggedVersions !== undefined && (f.tag === undefined || (tagged && tagged[1] !== valid[1]))) {
      throw new Error(`${spec.name}.${f.name}: tagged versions must be open-ended and carry a tag`);
    }
    if (tagged && (!flexible || tagged[0] < flexible[0])) throw new Error(`${spec.name}.${f.name}: tagged outside flexible versions`);
    const field = {
      name: f.name,
      prop: camel(f.name),
      versions,
      // where the field is a regular (positional) field
      regular: versions && tagged ? (tagged[0] > versions[0] ? [versions[0], tagged[0] - 1] : null) : versions,
      tagged,
      tag: f.tag ?? null,
      nullable: intersect(parseVersions(f.nullableVersions), versions),
      ignorable: f.ignorable === true,
      // a field-level override of the message's flexible versions (RequestHeader.ClientId)
      flexible: f.flexibleVersions === undefined ? undefined : intersect(parseVersions(f.flexibleVersions), valid),
      default: f.default,
      type: null,
    };
    field.type = resolveType(f.type, f);
    if (field.tagged && field.type.kind === 'prim' && field.type.prim === 'records') throw new Error(`${spec.name}.${f.name}: records cannot be tagged`);
    return field;
  };

  msg.top = makeStruct('', spec.fields ?? [], spec.name);
  // tags must be unique per struct
  for (const st of msg.structs) {
    const tags = new Set();
    for (const f of st.fields) {
      if (f.tag === null) continue;
      if (tags.has(f.tag)) throw new Error(`${spec.name}.${st.schemaName}: tag ${f.tag} reused`);
      tags.add(f.tag);
    }
  }
  return msg;
}

/** True when the field can hold null in the TypeScript type (nullable in some version, or records). */
export function typeNullable(field) {
  return field.nullable !== null || (field.type.kind === 'prim' && field.type.prim === 'records');
}

/**
 * The decoded default of a field as a JS value description:
 * { kind: 'number'|'bigint'|'bool'|'string'|'null'|'emptyBytes'|'emptyArray'|'struct'|'uuid', value }
 */
export function defaultOf(field) {
  const t = field.type;
  const d = field.default;
  if (t.kind === 'array') return d === 'null' ? { kind: 'null' } : { kind: 'emptyArray' };
  if (t.kind === 'struct') return d === 'null' ? { kind: 'null' } : { kind: 'struct', struct: t.struct };
  switch (t.prim) {
    case 'bool':
      return { kind: 'bool', value: d === true || d === 'true' };
    case 'int8':
    case 'int16':
    case 'uint16':
    case 'int32':
    case 'uint32':
      return { kind: 'number', value: d === undefined ? 0 : parseIntLiteral(d) };
    case 'float64':
      return { kind: 'number', value: d === undefined ? 0 : Number(d) };
    case 'int64':
      return { kind: 'bigint', value: d === undefined ? 0n : parseBigLiteral(d) };
    case 'string':
      if (d === 'null') return { kind: 'null' };
      return { kind: 'string', value: d === undefined ? '' : String(d) };
    case 'uuid':
      return { kind: 'uuid', value: '00000000-0000-0000-0000-000000000000' };
    case 'bytes':
      return d === 'null' ? { kind: 'null' } : { kind: 'emptyBytes' };
    case 'records':
      return { kind: 'null' };
    default:
      throw new Error(`no default for ${t.prim}`);
  }
}

function parseIntLiteral(d) {
  const s = String(d).trim();
  const neg = s.startsWith('-');
  const body = neg ? s.slice(1) : s;
  const v = body.startsWith('0x') ? parseInt(body.slice(2), 16) : Number(body);
  if (!Number.isInteger(v)) throw new Error(`bad integer default ${d}`);
  return neg ? -v : v;
}

function parseBigLiteral(d) {
  const s = String(d).trim();
  return s.startsWith('-') ? -BigInt(s.slice(1)) : BigInt(s);
}
