/**
 * The `fjord` command: each subcommand's module is loaded only when it runs, so the client
 * commands (topics, configs, groups, cluster-mirrors) never load the broker that `start` needs,
 * and answer in about a third of the time.
 */
import { createRequire } from 'node:module';
import { Exit } from './cli-common.js';

const require = createRequire(import.meta.url);

const USAGE = `usage: fjord <command> [options]

commands:
  start             run a node (fjord start --help)
  topics            create, list, describe, delete and alter topics (fjord topics --help)
  configs           describe and alter topic, broker and group configs (fjord configs --help)
  groups            list and describe consumer groups (fjord groups --help)
  cluster-mirrors   create, start, stop, pause, resume, describe, list and delete cluster mirrors
  broker-api-versions  the API versions a node answers with (exit 0 when it answers)
  version           print the version

Every command takes --help. Exit codes: 0 ok, 1 the request failed, 2 bad usage.`;

/** The `fjord` command. Returns the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { version } = require('../../package.json') as { version: string };
  switch (command) {
    case undefined:
    case 'version':
    case '--version':
      console.log(`fjord ${version}`);
      return 0;
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return 0;
    case 'start':
      return (await import('./start.js')).runStart(rest);
    case 'topics':
      return (await import('./topics.js')).runTopicsCli(rest);
    case 'configs':
      return (await import('./configs.js')).runConfigsCli(rest);
    case 'groups':
      return (await import('./groups.js')).runGroupsCli(rest);
    case 'cluster-mirrors':
      return (await import('./cluster-mirrors.js')).runClusterMirrorsCli(rest);
    case 'broker-api-versions':
      return (await import('./broker-api-versions.js')).runBrokerApiVersionsCli(rest);
    default:
      console.error(`fjord: unknown ${command.startsWith('-') ? 'option' : 'command'} '${command}' (see 'fjord --help')`);
      return Exit.USAGE;
  }
}
