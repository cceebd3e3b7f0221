/**
 * Structured logs on stderr, one record per line, in one of two formats:
 * - `json` (the default, for machines): `{"ts":…,"level":…,"msg":…,…fields}`, so a supervisor or
 *   `jq` can read them;
 * - `text` (for a terminal): `2026-01-01T12:00:00.000Z INFO  node started nodeId=1 dataDir=/d`,
 *   with values quoted when they hold spaces, quotes or `=`, and multi-line values (stacks)
 *   indented under the line.
 * The level comes from FJORD_LOG_LEVEL (debug, info, warn, error). The format is process-wide:
 * the node sets it from `log.format` at start (setLogFormat), before that FJORD_LOG_FORMAT
 * decides, so every logger already handed out follows the configured format.
 */

type LogLevel = 'debug' | 'info' | 'warn' | 'error';
type LogFormat = 'json' | 'text';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

function levelFromEnv(): LogLevel {
  const v = process.env['FJORD_LOG_LEVEL']?.toLowerCase();
  return v === 'debug' || v === 'info' || v === 'warn' || v === 'error' ? v : 'info';
}

let processFormat: LogFormat = process.env['FJORD_LOG_FORMAT']?.toLowerCase() === 'text' ? 'text' : 'json';

/** Sets the format of every logger that was not created with one of its own. */
export function setLogFormat(format: LogFormat): void {
  processFormat = format;
}

function textValue(v: unknown): string {
  const s = typeof v === 'string' ? v : v === undefined ? 'undefined' : JSON.stringify(v);
  return s === '' || /[\s"=]/.test(s) ? JSON.stringify(s) : s;
}

/** One text line; multi-line strings (stack traces) follow it, indented. */
export function formatText(rec: Record<string, unknown>): string {
  const { ts, level, msg, ...fields } = rec;
  let line = `${String(ts)} ${String(level).toUpperCase().padEnd(5)} ${String(msg)}`;
  const tails: string[] = [];
  for (const [k, v] of Object.entries(fields)) {
    if (typeof v === 'string' && v.includes('\n')) {
      tails.push(`  ${k}: ${v.replace(/\n/g, '\n    ')}`);
      continue;
    }
    line += ` ${k}=${textValue(v)}`;
  }
  return tails.length === 0 ? line + '\n' : `${line}\n${tails.join('\n')}\n`;
}

export function createLogger(
  base: Record<string, unknown> = {},
  level: LogLevel = levelFromEnv(),
  sink: (line: string) => void = (l) => process.stderr.write(l),
  format?: LogFormat,
): Logger {
  const min = RANK[level];
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (RANK[lvl] < min) return;
    const rec: Record<string, unknown> = { ts: new Date().toISOString(), level: lvl, msg, ...base, ...fields };
    for (const [k, v] of Object.entries(rec)) {
      if (v instanceof Error) rec[k] = v.stack ?? v.message;
      else if (typeof v === 'bigint') rec[k] = v.toString();
    }
    sink((format ?? processFormat) === 'text' ? formatText(rec) : JSON.stringify(rec) + '\n');
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ ...base, ...fields }, level, sink, format),
  };
}
