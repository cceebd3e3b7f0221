/**
 * What the `fjord` commands share:
 *
 * - one way to read arguments and print help, on Node's `util.parseArgs` (`parseCommand`):
 *   `--help`/`-h` prints the synopsis and every option with its description and exits 0; an
 *   unknown option, a missing value or a stray argument prints one line naming it and exits 2
 *   (`Exit.USAGE`), as does any UsageError a command throws while checking what it got;
 * - the client from `--bootstrap-server`, and the one way a Kafka error becomes a message and
 *   exit code 1 (`runAgainst`);
 * - the `k=v,k2=v2` lists of kafka-configs.sh (`k=[a,b]` keeps its commas, as in Kafka's
 *   ConfigCommand).
 */
import { parseArgs } from 'node:util';
import { KafkaClient } from '../client/kafka-client.js';
import { ERRORS } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';

/** Exit codes of every command: 0 ok, 1 the request failed (a Kafka error, an unreachable broker), 2 bad usage. */
export const Exit = { OK: 0, KAFKA_ERROR: 1, USAGE: 2 } as const;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type Out = (line: string) => void;

export interface CliIo {
  readonly out: Out;
  readonly err: Out;
}

export const consoleIo: CliIo = { out: (l) => console.log(l), err: (l) => console.error(l) };

type OptionSpec = { readonly type: 'string'; readonly multiple?: boolean; readonly short?: string; readonly default?: string | readonly string[] } | { readonly type: 'boolean'; readonly short?: string; readonly default?: boolean };
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;
type ParseArgsOptions = NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>['options']>;

/** A string option's help names its value: `['HOST:PORT', 'the node to ask']`; a flag's is its text. */
type OptionHelp<T extends OptionSpecs> = { readonly [K in keyof T]: HelpFor<T[K]> };
type HelpFor<S> = S extends { type: 'string' } ? readonly [value: string, text: string] : string;

export interface CommandSpec<T extends OptionSpecs> {
  /** The words after `fjord`, e.g. `topics`. */
  readonly command: string;
  /** Printed first by --help: the usage lines. */
  readonly synopsis: string;
  readonly options: T;
  readonly help: OptionHelp<T>;
  /** Positional arguments accepted (default none). */
  readonly positionals?: boolean;
}

type Value<S> = S extends { type: 'boolean' } ? boolean : S extends { multiple: true } ? string[] : string;
/** Parsed values: options with a default are always present. */
export type Values<T extends OptionSpecs> = { -readonly [K in keyof T]: T[K] extends { default: unknown } ? Value<T[K]> : Value<T[K]> | undefined };

type Parsed<T extends OptionSpecs> = { readonly values: Values<T>; readonly positionals: string[] } | { readonly exit: number };

/** The --help text: synopsis, then one line per option, then the exit codes. */
export function helpText<T extends OptionSpecs>(spec: CommandSpec<T>): string {
  const rows: [string, string][] = Object.entries(spec.options).map(([name, o]) => {
    const h = spec.help[name as keyof T] as string | readonly [string, string];
    const flag = `${o.short ? `-${o.short}, ` : ''}--${name}${typeof h === 'string' ? '' : ` ${h[0]}`}`;
    const text = typeof h === 'string' ? h : h[1];
    const dflt = o.default !== undefined && o.default !== false && !(Array.isArray(o.default) && o.default.length === 0) ? ` (default ${String(o.default)})` : '';
    return [flag, `${text}${dflt}${o.type === 'string' && o.multiple ? ' (repeatable)' : ''}`];
  });
  rows.push(['-h, --help', 'print this help']);
  const width = Math.max(...rows.map((r) => r[0].length));
  return [
    spec.synopsis,
    '',
    'options:',
    ...rows.map(([f, t]) => `  ${f.padEnd(width)}  ${t}`),
    '',
    'exit codes: 0 ok, 1 the request failed (a Kafka error or an unreachable broker), 2 bad usage',
  ].join('\n');
}

/** One line for a usage error, pointing at --help. */
export function usageLine(command: string, message: string): string {
  return `fjord ${command}: ${message} (see 'fjord ${command} --help')`;
}

/** Reads `argv` per `spec`; throws UsageError with a one-line message for anything it cannot take. */
export function parseOrThrow<T extends OptionSpecs>(spec: CommandSpec<T>, argv: readonly string[]): { values: Values<T> & { help: boolean }; positionals: string[] } {
  try {
    const r = parseArgs({
      args: [...argv],
      // The specs are parseArgs's own option shape, declared readonly here so commands can write them `as const`.
      options: { ...spec.options, help: { type: 'boolean', short: 'h', default: false } } as unknown as ParseArgsOptions,
      strict: true,
      allowPositionals: spec.positionals ?? false,
    });
    return { values: r.values as unknown as Values<T> & { help: boolean }, positionals: r.positionals };
  } catch (e) {
    throw new UsageError(parseArgsMessage(e));
  }
}

/**
 * Reads `argv` per `spec`. With --help it prints the help and answers `{ exit: 0 }`; on a usage
 * error it prints one line to `io.err` and answers `{ exit: 2 }`.
 */
export function parseCommand<T extends OptionSpecs>(spec: CommandSpec<T>, argv: readonly string[], io: CliIo): Parsed<T> {
  // --help wins over anything else on the line, even what could not be parsed.
  if (argv.includes('--help') || argv.includes('-h')) {
    io.out(helpText(spec));
    return { exit: Exit.OK };
  }
  try {
    return parseOrThrow(spec, argv);
  } catch (e) {
    io.err(usageLine(spec.command, (e as Error).message));
    return { exit: Exit.USAGE };
  }
}

/** util.parseArgs's errors, shortened to what the user typed wrong. */
function parseArgsMessage(e: unknown): string {
  const code = (e as { code?: string }).code;
  const message = e instanceof Error ? e.message : String(e);
  const quoted = /'([^']+)'/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && quoted) return `unknown option '${quoted}'`;
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL' && quoted) return `unexpected argument '${quoted}'`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const opt = /--[a-z0-9-]+/.exec(message)?.[0];
    return message.includes('argument missing') || message.includes('<value>') ? `${opt ?? 'an option'} needs a value` : `${opt ?? 'an option'} takes no value`;
  }
  return message;
}


/**
 * Runs one command against the cluster at `bootstrap`, as Kafka's tools do: a client that cannot
 * be made, or a Kafka error, is printed (its code named) and answers exit code 1; the client is
 * closed afterwards.
 */
export async function runAgainst(
  command: string,
  bootstrap: string,
  err: Out,
  failurePrefix: string,
  fn: (client: KafkaClient) => Promise<void>,
): Promise<number> {
  let client: KafkaClient;
  try {
    client = clientFor(bootstrap, `fjord-${command}`);
  } catch (e) {
    err(`fjord ${command}: ${describeFailure(e)}`);
    return Exit.KAFKA_ERROR;
  }
  try {
    await fn(client);
    return Exit.OK;
  } catch (e) {
    err(`${failurePrefix}: ${describeFailure(e)}`);
    return Exit.KAFKA_ERROR;
  } finally {
    client.close();
  }
}

export function clientFor(bootstrap: string, clientId: string): KafkaClient {
  // A bare host means Kafka's default port.
  return new KafkaClient({ bootstrapServers: [bootstrap.includes(':') ? bootstrap : `${bootstrap}:9092`], clientId, connectTimeoutMs: 10_000 });
}

export function errorName(code: number): string {
  return ERRORS.get(code)?.name ?? `UNKNOWN_${code}`;
}

/** Throws the error of a per-resource result, named by its Kafka code. */
export function check(code: number, message: string | null, what: string): void {
  if (code !== 0) throw new KafkaError(code, `${what}: ${errorName(code)}${message ? `: ${message}` : ''}`);
}

/** The message printed for a failure: Kafka errors carry their code name. */
export function describeFailure(e: unknown): string {
  if (e instanceof KafkaError) return e.message.includes(e.codeName) ? e.message : `${e.codeName}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

/** `k=v,k2=[a,b]` (ConfigCommand's form) into pairs, in order. */
export function parseConfigList(text: string): [string, string][] {
  const out: [string, string][] = [];
  let depth = 0;
  let start = 0;
  const parts: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '[') depth++;
    else if (c === ']') depth = Math.max(0, depth - 1);
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  for (const part of parts) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) throw new UsageError(`invalid config '${part}': expected key=value`);
    let value = part.slice(eq + 1);
    if (value.startsWith('[') && value.endsWith(']')) value = value.slice(1, -1);
    out.push([part.slice(0, eq).trim(), value]);
  }
  return out;
}
