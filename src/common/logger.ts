/**
 * Structured logs: one JSON object per line on stderr (`{"ts":…,"level":…,"msg":…,…fields}`), so
 * a supervisor or `jq` can read them. Level from FJORD_LOG_LEVEL (debug, info, warn, error).
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
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

export function createLogger(base: Record<string, unknown> = {}, level: LogLevel = levelFromEnv(), sink: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const min = RANK[level];
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (RANK[lvl] < min) return;
    const rec: Record<string, unknown> = { ts: new Date().toISOString(), level: lvl, msg, ...base, ...fields };
    for (const [k, v] of Object.entries(rec)) {
      if (v instanceof Error) rec[k] = v.stack ?? v.message;
      else if (typeof v === 'bigint') rec[k] = v.toString();
    }
    sink(JSON.stringify(rec) + '\n');
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ ...base, ...fields }, level, sink),
  };
}
