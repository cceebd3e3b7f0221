/** Parses Java-properties text: `key=value` or `key: value`, `#`/`!` comments, backslash continuations. */
export function parseProperties(text: string): [string, string][] {
  const out: [string, string][] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.trimStart();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    while (/(^|[^\\])(\\\\)*\\$/.test(line) && i + 1 < lines.length) line = line.slice(0, -1) + lines[++i]!.trimStart();
    const m = /^((?:\\.|[^=:\s])+)\s*[=:\s]\s*(.*)$/.exec(line);
    if (!m) {
      out.push([line.trim(), '']);
      continue;
    }
    out.push([m[1]!.replace(/\\(.)/g, '$1'), m[2]!.trimEnd()]);
  }
  return out;
}
