/**
 * What the `fjord topics` and `fjord configs` commands share: the client from
 * `--bootstrap-server`, the one way a Kafka error becomes a message and exit code 1, and the
 * `k=v,k2=v2` lists of kafka-configs.sh (`k=[a,b]` keeps its commas, as in Kafka's ConfigCommand).
 */
import { KafkaClient } from '../client/kafka-client.js';
import { ERRORS } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';

/** Exit codes: 0 ok, 1 a Kafka error or an unreachable broker, 2 bad usage. */
export const Exit = { OK: 0, KAFKA_ERROR: 1, USAGE: 2 } as const;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type Out = (line: string) => void;

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
