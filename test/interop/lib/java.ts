/** Runs the Java scenario program and the stock Kafka command-line tools (kafka-tools) in a JVM. */
import { LOG4J2_CONFIG, clientsClasspath } from './paths.js';
import { lastJsonLine, run, tail, type RunResult } from './run.js';

function jvm(kafkaClientsVersion?: string): string[] {
  return [
    '-Xmx384m',
    '-XX:+UseSerialGC',
    // C1 only: these JVMs live for seconds, so start-up time is what counts.
    '-XX:TieredStopAtLevel=1',
    `-Dlog4j2.configurationFile=${LOG4J2_CONFIG}`,
    `-Dfjord.loglevel=${process.env.FJORD_INTEROP_LOG_LEVEL ?? 'ERROR'}`,
    '-cp',
    clientsClasspath(kafkaClientsVersion),
  ];
}

/**
 * Runs `Scenarios <name> bootstrap=... key=value...` and returns its JSON observation; on
 * `kafkaClientsVersion`'s kafka-clients when given (see clientsClasspath).
 */
export async function javaScenario(
  name: string,
  bootstrap: string,
  opts: Readonly<Record<string, string>>,
  timeoutMs = 120_000,
  kafkaClientsVersion?: string,
): Promise<Record<string, unknown>> {
  const args = [...jvm(kafkaClientsVersion), 'fjord.interop.Scenarios', name, `bootstrap=${bootstrap}`];
  for (const [k, v] of Object.entries(opts)) args.push(`${k}=${v}`);
  const r = await run('java', args, { timeoutMs });
  const obs = lastJsonLine(r);
  if (r.code !== 0 || 'error' in obs) {
    throw new Error(`java scenario ${name} failed: ${String(obs.error)}: ${String(obs.message)}\n${tail(r.stderr, 15)}`);
  }
  return obs;
}

/** Runs a kafka-tools main class (what bin/kafka-*.sh would run). */
export async function javaTool(
  mainClass: string,
  args: readonly string[],
  opts: { input?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return run('java', [...jvm(), mainClass, ...args], {
    timeoutMs: opts.timeoutMs ?? 90_000,
    ...(opts.input === undefined ? {} : { input: opts.input }),
  });
}

export function mustSucceed(what: string, r: RunResult): RunResult {
  if (r.code !== 0) {
    throw new Error(`${what} failed (exit ${r.code}${r.timedOut ? ', timed out' : ''}):\n${tail(r.stdout, 15)}\n${tail(r.stderr, 15)}`);
  }
  return r;
}
