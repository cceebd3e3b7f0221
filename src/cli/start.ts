/**
 * `fjord start [server.properties] [--config FILE]... [--override key=value]...`: runs one node until
 * SIGTERM/SIGINT, then shuts it down cleanly (stop accepting, answer in-flight requests, flush
 * logs, write the clean-shutdown marker).
 */
import { BrokerConfig, ConfigError } from '../broker/config.js';
import { createLogger } from '../common/logger.js';
import { BrokerNode } from '../broker/node.js';
import { configFromEnvironment, readPropertiesFile } from './config-sources.js';
import { consoleIo, Exit, helpText, parseOrThrow, usageLine, UsageError, type CommandSpec, type OptionSpecs } from './cli-common.js';

const START = {
  command: 'start',
  synopsis: `usage: fjord start [server.properties] [--config server.properties]... [--env-prefix PREFIX] [--override key=value]...

Starts a Fjord node. Without a config file the node runs with node.id=1,
listeners=PLAINTEXT://127.0.0.1:9092 and its data under ./data.`,
  options: {
    config: { type: 'string', short: 'c', multiple: true, default: [] },
    'env-prefix': { type: 'string' },
    override: { type: 'string', multiple: true, default: [] },
  },
  help: {
    config: ['FILE', 'a server.properties file (Kafka\'s format); later files win'],
    'env-prefix': ['PREFIX', 'also read configs from environment variables named PREFIX + the key (KAFKA_LOG_DIRS is log.dirs); they win over the files'],
    override: ['key=value', 'a config that wins over the files and the environment'],
  },
  positionals: true,
} as const satisfies CommandSpec<OptionSpecs>;

/**
 * Parses the start arguments into config entries (files first, then the environment with --env-prefix, overrides last; later wins). A
 * bad option throws UsageError; an unreadable file or a malformed override throws ConfigError.
 */
export function parseStartArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): [string, string][] {
  const { values, positionals } = parseOrThrow(START, argv);
  // kafka-server-start.sh style: the properties file as the first positional argument.
  const [first, ...extra] = positionals;
  if (extra.length > 0 || (first !== undefined && !first.endsWith('.properties'))) throw new UsageError(`unexpected argument '${extra[0] ?? first}'`);
  const entries: [string, string][] = [];
  for (const file of [...(first !== undefined ? [first] : []), ...values.config]) entries.push(...readPropertiesFile(file));
  if (values['env-prefix'] !== undefined) entries.push(...configFromEnvironment(env, values['env-prefix']));
  for (const kv of values.override) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new ConfigError(`--override expects key=value, got '${kv}'`);
    entries.push([kv.slice(0, eq).trim(), kv.slice(eq + 1).trim()]);
  }
  return entries;
}

export async function runStart(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    consoleIo.out(helpText(START));
    return Exit.OK;
  }
  const log = createLogger({ component: 'fjord' });
  let config: BrokerConfig;
  try {
    config = new BrokerConfig(parseStartArgs(argv));
  } catch (err) {
    if (err instanceof UsageError) {
      consoleIo.err(usageLine('start', err.message));
      return Exit.USAGE;
    }
    if (err instanceof ConfigError) {
      log.error('invalid configuration, refusing to start', { reason: err.message });
      console.error(`fjord: ${err.message}`);
      return 1;
    }
    throw err;
  }
  for (const w of config.warnings) log.warn(w.message, { key: w.key });

  // Handlers go in before the node starts: a SIGTERM that arrives while it starts (or just after it
  // logs "node started") shuts it down cleanly once it is up, instead of killing the process. They
  // are `once` handlers, so a second signal still ends the process at once, as before.
  let requested: string | null = null;
  let onSignal = (signal: string): void => {
    requested = signal;
    log.info('stop requested while starting; stopping once started', { signal });
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));

  let node: BrokerNode;
  try {
    node = await BrokerNode.start(config, log);
  } catch (err) {
    log.error('node failed to start', { err: err instanceof Error ? err : String(err) });
    return 1;
  }

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      log.info('shutting down', { signal });
      node.close().then(
        () => {
          log.info('shutdown complete');
          resolve(0);
        },
        (err: unknown) => {
          log.error('unclean shutdown', { err: err instanceof Error ? err : String(err) });
          resolve(1);
        },
      );
    };
    onSignal = stop;
    if (requested !== null) stop(requested);
  });
}
