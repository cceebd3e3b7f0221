/**
 * Where a node's configuration comes from before the broker reads it: server.properties files and,
 * for containers, environment variables. `fjord start` and the image's health check
 * (`fjord broker-api-versions --node-config`) read them the same way, so the check asks the
 * listener the node was told to open.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/config-error.js';
import { parseProperties } from '../config/properties.js';

export function readPropertiesFile(file: string): [string, string][] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  return parseProperties(text);
}

/**
 * The configs named by environment variables, in the convention of Apache Kafka's container image:
 * the prefix is dropped, the rest lower-cased, `___` stands for `-`, `__` for `_` and `_` for `.`
 * (KAFKA_LOG_DIRS → log.dirs, KAFKA_LISTENER_NAME_SASL__SSL_... → listener.name.sasl_ssl...).
 * An empty prefix is refused: every variable of the environment would become a key.
 */
export function configFromEnvironment(env: NodeJS.ProcessEnv, prefix: string): [string, string][] {
  if (prefix === '') throw new ConfigError('--env-prefix must not be empty');
  const entries: [string, string][] = [];
  for (const name of Object.keys(env).sort()) {
    const value = env[name];
    if (!name.startsWith(prefix) || name.length === prefix.length || value === undefined) continue;
    const key = name
      .slice(prefix.length)
      .toLowerCase()
      .split('___')
      .map((part) => part.split('__').map((p) => p.replaceAll('_', '.')).join('_'))
      .join('-');
    entries.push([key, value]);
  }
  return entries;
}
