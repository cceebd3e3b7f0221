/**
 * Where Fjord deliberately differs from Apache Kafka in what a client can observe, with why.
 * Keys are `<client>/<scenario>:<path>`; the path is the dotted JSON path the differential
 * runner prints, and `*` matches one path segment. A listed path is reported but does not fail.
 */
export const KNOWN_DIFFERENCES: Readonly<Record<string, string>> = {};

function segmentMatch(pattern: string, path: string): boolean {
  const p = pattern.split('.');
  const s = path.split('.');
  return p.length === s.length && p.every((seg, i) => seg === '*' || seg === s[i]);
}

/** The reason a difference at `path` of scenario `id` is accepted, or null. */
export function knownDifference(
  id: string,
  path: string,
  table: Readonly<Record<string, string>> = KNOWN_DIFFERENCES,
): string | null {
  for (const [key, reason] of Object.entries(table)) {
    const colon = key.indexOf(':');
    if (key.slice(0, colon) === id && segmentMatch(key.slice(colon + 1), path)) return reason;
  }
  return null;
}
