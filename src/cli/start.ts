/**
 * `fjord start [--config server.properties] [--override key=value ...]`: runs one node until
 * SIGTERM/SIGINT, then shuts it down cleanly (stop accepting, answer in-flight requests, flush
 * logs, write the clean-shutdown marker).
 */
import { readFileSync } from 'node:fs';
import { BrokerConfig, ConfigError, parseProperties } from '../broker/config.js';
import { createLogger } from '../common/logger.js';
import { BrokerNode } from '../broker/node.js';

export const START_USAGE = `usage: fjord start [--config server.properties] [--override key=value ...]

Starts a Fjord node. Without a config file the node runs with node.id=1,
listeners=PLAINTEXT://127.0.0.1:9092 and its data under ./data.`;

/** Parses the start arguments into config entries (file first, overrides last, later wins). */
export function parseStartArgs(argv: readonly string[]): [string, string][] {
  const entries: [string, string][] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new ConfigError(`${a} needs a value`);
      return v;
    };
    if (a === '--config' || a === '-c') {
      const file = next();
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (err) {
        throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
      }
      entries.push(...parseProperties(text));
    } else if (a.startsWith('--config=')) {
      entries.push(...parseProperties(readFileSync(a.slice('--config='.length), 'utf8')));
    } else if (a === '--override' || a.startsWith('--override=')) {
      const kv = a === '--override' ? next() : a.slice('--override='.length);
      const eq = kv.indexOf('=');
      if (eq <= 0) throw new ConfigError(`--override expects key=value, got '${kv}'`);
      entries.push([kv.slice(0, eq).trim(), kv.slice(eq + 1).trim()]);
    } else if (!a.startsWith('-') && i === 0 && a.endsWith('.properties')) {
      // kafka-server-start.sh style: the properties file as the first positional argument.
      entries.push(...parseProperties(readFileSync(a, 'utf8')));
    } else {
      throw new ConfigError(`unknown option '${a}'\n${START_USAGE}`);
    }
  }
  return entries;
}

export async function runStart(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(START_USAGE);
    return 0;
  }
  const log = createLogger({ component: 'fjord' });
  let config: BrokerConfig;
  try {
    config = new BrokerConfig(parseStartArgs(argv));
  } catch (err) {
    if (err instanceof ConfigError) {
      log.error('invalid configuration, refusing to start', { reason: err.message });
      console.error(`fjord: ${err.message}`);
      return 1;
    }
    throw err;
  }
  for (const w of config.warnings) log.warn(w.message, { key: w.key });

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
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
