/**
 * A `sasl.jaas.config` value, as Kafka's JaasConfig parses it:
 * `<LoginModule class> <required|requisite|sufficient|optional> key="value" ... ;`. Values may be
 * quoted (with `\"` and `\\` escapes) or bare words.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';

export interface JaasLoginModule {
  readonly loginModule: string;
  readonly flag: string;
  readonly options: ReadonlyMap<string, string>;
}

const TOKEN = /\s*(?:"((?:\\.|[^"\\])*)"|([^\s=;"]+)|(=)|(;))/y;

export function parseJaasConfig(text: string, key: string): JaasLoginModule[] {
  const tokens: { value: string; kind: 'word' | 'quoted' | '=' | ';' }[] = [];
  TOKEN.lastIndex = 0;
  let pos = 0;
  while (pos < text.length) {
    if (/^\s*$/.test(text.slice(pos))) break;
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(text);
    if (!m) throw new KafkaError(ErrorCode.INVALID_CONFIG, `${key}: cannot parse JAAS configuration near '${text.slice(pos, pos + 20)}'`);
    if (m[1] !== undefined) tokens.push({ value: m[1].replace(/\\(.)/g, '$1'), kind: 'quoted' });
    else if (m[2] !== undefined) tokens.push({ value: m[2], kind: 'word' });
    else if (m[3] !== undefined) tokens.push({ value: '=', kind: '=' });
    else tokens.push({ value: ';', kind: ';' });
    pos = TOKEN.lastIndex;
  }
  const modules: JaasLoginModule[] = [];
  let i = 0;
  const bad = (what: string): KafkaError => new KafkaError(ErrorCode.INVALID_CONFIG, `${key}: invalid JAAS configuration: ${what}`);
  while (i < tokens.length) {
    const cls = tokens[i++];
    const flag = tokens[i++];
    if (!cls || cls.kind !== 'word' || !flag || flag.kind !== 'word') throw bad('expected "<LoginModule> <flag>"');
    if (!['required', 'requisite', 'sufficient', 'optional'].includes(flag.value.toLowerCase())) throw bad(`unknown control flag ${flag.value}`);
    const options = new Map<string, string>();
    for (;;) {
      const t = tokens[i++];
      if (!t) throw bad("missing ';' at the end of the login module");
      if (t.kind === ';') break;
      const eq = tokens[i++];
      const v = tokens[i++];
      if (t.kind !== 'word' || eq?.kind !== '=' || !v || (v.kind !== 'word' && v.kind !== 'quoted')) throw bad(`expected key=value after ${t.value}`);
      options.set(t.value, v.value);
    }
    modules.push({ loginModule: cls.value, flag: flag.value.toLowerCase(), options });
  }
  if (modules.length === 0) throw bad('no login module');
  return modules;
}
