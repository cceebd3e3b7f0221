// Importer: turns the reference schema sets into the project's own messages/*.json.
// It keeps wire facts only (drops `about` text and comments), applies the number remapping
// described in messages/README.md, and writes one file per message, named after it.
// messages/ is the source of truth afterwards; generate.mjs never reads the reference sets.
// The Kafka directory holds one folder per source (clients/, metadata/, raft/,
// group-coordinator/, share-coordinator/, transaction-coordinator/, streams/), e.g. the
// `common/message` and `common/metadata` JSON unpacked from the Kafka 4.4.0 jars.
//
//   node codegen/import-upstream.mjs <kafka schemas dir> <kip-1279-prototype-schemas dir>
import { readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseJsonc } from './jsonc.mjs';

const [kafkaDir, kipDir] = process.argv.slice(2);
if (!kafkaDir || !kipDir) {
  console.error('usage: node codegen/import-upstream.mjs <kafka schemas> <kip-1279 schemas>');
  process.exit(2);
}

// Numbers the prototype took that upstream Kafka (4.4) has since given another meaning.
const REMAP_API_KEY = { CreateClusterMirrorRequest: 106, CreateClusterMirrorResponse: 106, MirrorTopicStateChangeRecord: 30 };

const FIELD_KEYS = ['name', 'type', 'versions', 'nullableVersions', 'taggedVersions', 'tag', 'flexibleVersions', 'default', 'ignorable', 'mapKey', 'entityType', 'zeroCopy', 'fields'];
const TOP_KEYS = ['apiKey', 'type', 'listeners', 'name', 'validVersions', 'flexibleVersions', 'latestVersionUnstable', 'fields', 'commonStructs'];

function cleanField(f) {
  const out = {};
  for (const k of FIELD_KEYS) {
    if (f[k] === undefined) continue;
    out[k] = k === 'fields' ? f.fields.map(cleanField) : f[k];
  }
  // A field given only taggedVersions exists exactly in those versions.
  if (out.versions === undefined && out.taggedVersions !== undefined) out.versions = out.taggedVersions;
  return out;
}

function clean(spec) {
  const out = {};
  for (const k of TOP_KEYS) {
    if (spec[k] === undefined) continue;
    if (k === 'fields') out.fields = spec.fields.map(cleanField);
    else if (k === 'commonStructs') out.commonStructs = spec.commonStructs.map((s) => ({ name: s.name, versions: s.versions, fields: s.fields.map(cleanField) }));
    else out[k] = spec[k];
  }
  if (REMAP_API_KEY[out.name] !== undefined) out.apiKey = REMAP_API_KEY[out.name];
  // An unset MirrorInfo must mean "not a mirror topic": with Java's implicit default (an empty
  // struct) a plain v8 CreateTopics would carry a MirrorInfo with a zero topic id.
  if (out.name === 'CreateTopicsRequest') {
    const topic = out.fields.find((f) => f.name === 'Topics');
    const i = topic?.fields?.findIndex((f) => f.name === 'MirrorInfo') ?? -1;
    if (i >= 0) topic.fields[i] = cleanField({ ...topic.fields[i], default: 'null' });
  }
  return out;
}

function load(root) {
  const specs = new Map();
  for (const d of readdirSync(root)) {
    const p = join(root, d);
    if (!statSync(p).isDirectory()) continue;
    for (const f of readdirSync(p)) {
      if (!f.endsWith('.json')) continue;
      const spec = parseJsonc(readFileSync(join(p, f), 'utf8'));
      if (spec.validVersions === 'none') continue; // APIs removed in Kafka 4.0
      specs.set(spec.name, { spec, group: d });
    }
  }
  return specs;
}

const all = load(kafkaDir);
for (const [name, v] of load(kipDir)) all.set(name, v); // the prototype extends Fetch, CreateTopics, PartitionChangeRecord

mkdirSync('messages', { recursive: true });
for (const [name, { spec }] of [...all].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
  writeFileSync(join('messages', `${name}.json`), format(clean(spec)) + '\n');
}
console.log(`wrote ${all.size} schemas`);

// One field per line keeps diffs of schema changes readable.
function format(spec) {
  const lines = ['{'];
  const entries = Object.entries(spec);
  entries.forEach(([k, v], i) => {
    const comma = i < entries.length - 1 ? ',' : '';
    if (k === 'fields') lines.push(`  "fields": [`, ...fieldLines(v, '    '), `  ]${comma}`);
    else if (k === 'commonStructs') {
      lines.push('  "commonStructs": [');
      v.forEach((s, j) => {
        lines.push(`    { "name": ${JSON.stringify(s.name)}, "versions": ${JSON.stringify(s.versions)}, "fields": [`, ...fieldLines(s.fields, '      '), `    ]}${j < v.length - 1 ? ',' : ''}`);
      });
      lines.push(`  ]${comma}`);
    } else lines.push(`  ${JSON.stringify(k)}: ${JSON.stringify(v)}${comma}`);
  });
  lines.push('}');
  return lines.join('\n');
}

function fieldLines(fields, indent) {
  const out = [];
  fields.forEach((f, i) => {
    const comma = i < fields.length - 1 ? ',' : '';
    const { fields: sub, ...rest } = f;
    const head = Object.entries(rest).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(', ');
    if (sub) out.push(`${indent}{ ${head}, "fields": [`, ...fieldLines(sub, indent + '  '), `${indent}]}${comma}`);
    else out.push(`${indent}{ ${head} }${comma}`);
  });
  return out;
}
