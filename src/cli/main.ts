import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The `fjord` command. Returns the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command] = argv;
  const { version } = require('../../package.json') as { version: string };
  switch (command) {
    case undefined:
    case 'version':
    case '--version':
      console.log(`fjord ${version}`);
      return 0;
    default:
      console.error(`fjord: unknown command '${command}'`);
      return 2;
  }
}
