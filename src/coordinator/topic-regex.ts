/**
 * KIP-848 regular-expression subscriptions (`SubscribedTopicRegex`), resolved by the group
 * coordinator the way Apache Kafka's GroupMetadataManager resolves them: the expression is RE2
 * syntax (Kafka compiles it with RE2J, not java.util.regex), it must match the whole topic name
 * (`Matcher.matches()`), and every topic in the metadata is a candidate, internal ones included.
 *
 * RE2 through the `re2` binding rather than JavaScript's RegExp: the two differ (RE2 has `(?i)`
 * inline flags, `\A`/`\z`, POSIX classes and `\Q...\E`; it refuses lookaround and
 * backreferences), and a member's subscription must select the same topics it would on Kafka.
 * RE2 also runs in linear time, so a hostile expression cannot stall the coordinator.
 */
import RE2 from 're2';

/** Compiled whole-name matchers by source, shared by every group (expressions are few). */
const cache = new Map<string, RE2>();
const CACHE_LIMIT = 1024;

/** The RE2 syntax error of an expression, or null when RE2 accepts it. */
export function topicRegexError(source: string): string | null {
  try {
    compile(source);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** True when `topic` as a whole matches the expression; false for one RE2 refuses. */
export function topicRegexMatches(source: string, topic: string): boolean {
  let re: RE2;
  try {
    re = compile(source);
  } catch {
    return false;
  }
  return re.test(topic);
}

function compile(source: string): RE2 {
  let re = cache.get(source);
  if (re) return re;
  re = new RE2(`^(?:${source})$`);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(source, re);
  return re;
}
