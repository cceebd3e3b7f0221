#!/usr/bin/env node
// Entry point of the `fjord` command; the TypeScript sources are compiled to dist/ by `npm run build`.
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => { if (typeof code === 'number') process.exitCode = code; },
  (err) => { console.error(err instanceof Error ? err.message : err); process.exitCode = 1; },
);
