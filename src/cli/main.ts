import { createRequire } from 'node:module';
import { runGroupsCli } from './groups.js';
import { runClusterMirrorsCli } from './cluster-mirrors.js';
import { runStart } from './start.js';
import { runTopicsCli } from './topics.js';
import { runConfigsCli } from './configs.js';
import { Exit } from './cli-common.js';

const require = createRequire(import.meta.url);

const USAGE = `usage: fjord <command> [options]

commands:
  start             run a node (fjord start --help)
  topics            create, list, describe, delete and alter topics (fjord topics --help)
  configs           describe and alter topic, broker and group configs (fjord configs --help)
  groups            list and describe consumer groups (fjord groups --help)
  cluster-mirrors   create, start, stop, pause, resume, describe, list and delete cluster mirrors
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
      return runStart(rest);
    case 'topics':
      return runTopicsCli(rest);
    case 'configs':
      return runConfigsCli(rest);
    case 'groups':
      return runGroupsCli(rest);
    case 'cluster-mirrors':
      return runClusterMirrorsCli(rest);
    default:
      console.error(`fjord: unknown ${command.startsWith('-') ? 'option' : 'command'} '${command}' (see 'fjord --help')`);
      return Exit.USAGE;
  }
}
