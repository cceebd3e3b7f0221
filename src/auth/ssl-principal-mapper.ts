/**
 * `ssl.principal.mapping.rules`, as Kafka's SslPrincipalMapper reads them: a comma-separated list
 * of `RULE:pattern/replacement/` (optionally followed by `L` or `U` to change case) and
 * `DEFAULT`. The first rule whose pattern matches the whole distinguished name gives the user
 * name; DEFAULT (and no match at all) keeps the distinguished name as it is.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';

interface Rule {
  readonly isDefault: boolean;
  readonly pattern: RegExp | null;
  readonly replacement: string;
  readonly toLowerCase: boolean;
  readonly toUpperCase: boolean;
}

const RULE = /^\s*(DEFAULT|RULE:((?:\\.|[^\\/])*)\/((?:\\.|[^\\/])*)\/([LU]?))\s*(,|$)/;

export class SslPrincipalMapper {
  private constructor(private readonly rules: readonly Rule[]) {}

  static parse(text: string | undefined): SslPrincipalMapper {
    const rules: Rule[] = [];
    let rest = (text ?? 'DEFAULT').trim();
    while (rest.length > 0) {
      const m = RULE.exec(rest);
      if (!m) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Invalid rule in ssl.principal.mapping.rules: ${rest}`);
      if (m[1] === 'DEFAULT') rules.push({ isDefault: true, pattern: null, replacement: '', toLowerCase: false, toUpperCase: false });
      else {
        let pattern: RegExp;
        try {
          // Java's Matcher.matches() is a whole-string match.
          pattern = new RegExp(`^(?:${m[2]!})$`);
        } catch (err) {
          throw new KafkaError(ErrorCode.INVALID_CONFIG, `Invalid pattern in ssl.principal.mapping.rules: ${(err as Error).message}`);
        }
        rules.push({ isDefault: false, pattern, replacement: m[3]!, toLowerCase: m[4] === 'L', toUpperCase: m[4] === 'U' });
      }
      rest = rest.slice(m[0].length).trim();
    }
    return new SslPrincipalMapper(rules);
  }

  /** The user name for a certificate subject in RFC 2253 form, e.g. `CN=alice,O=Example`. */
  name(distinguishedName: string): string {
    for (const r of this.rules) {
      if (r.isDefault) return distinguishedName;
      if (!r.pattern!.test(distinguishedName)) continue;
      const out = distinguishedName.replace(r.pattern!, r.replacement);
      return r.toLowerCase ? out.toLowerCase() : r.toUpperCase ? out.toUpperCase() : out;
    }
    return distinguishedName;
  }
}

/**
 * RFC 2253 form of a subject as node:crypto's X509Certificate prints it (one `K=V` per line, the
 * most significant first): reversed and comma-joined, as Java's X500Principal.getName() gives it.
 */
export function rfc2253(subjectLines: string): string {
  return subjectLines
    .split('\n')
    .filter(Boolean)
    .reverse()
    .map((rdn) => {
      const eq = rdn.indexOf('=');
      const value = rdn.slice(eq + 1).replace(/([,+"\\<>;])/g, '\\$1');
      return `${rdn.slice(0, eq)}=${value}`;
    })
    .join(',');
}
