// Runs the benchmarks in bench/ (every *.ts and *.mjs file except this one), each in its own
// Node process; or, given a file, runs that one TypeScript script with its arguments. TypeScript is loaded through the module hooks
// below (ts.transpileModule, no type check), so `npm run bench` needs no separate compile step.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { register } from 'node:module';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Module hook: `./x.js` imports resolve to `./x.ts` when only the TypeScript source exists. */
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (err) {
    const relative = specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:');
    if (relative && specifier.endsWith('.js')) return next(specifier.slice(0, -3) + '.ts', context);
    throw err;
  }
}

let ts;
/** Module hook: strips types from .ts files (ES module output). */
export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  ts ??= (await import('typescript')).default;
  const fileName = fileURLToPath(url);
  const out = ts.transpileModule(readFileSync(fileName, 'utf8'), {
    fileName,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false },
  });
  return { format: 'module', source: out.outputText, shortCircuit: true };
}

const self = fileURLToPath(import.meta.url);
if (process.argv[1] !== undefined && resolvePath(process.argv[1]) === self) {
  const [file, ...args] = process.argv.slice(2);
  if (file !== undefined) {
    // `node bench/run.mjs <file.ts> [args…]` runs one script as if it were the main module.
    register(import.meta.url);
    process.argv = [process.argv[0], resolvePath(file), ...args];
    await import(pathToFileURL(resolvePath(file)).href);
  } else {
    const dir = dirname(self);
    const benches = readdirSync(dir)
      .filter((f) => (f.endsWith('.ts') || f.endsWith('.mjs')) && f !== 'run.mjs' && !f.endsWith('.d.ts'))
      .sort();
    let failed = 0;
    for (const f of benches) {
      console.log(`\n## ${f}`);
      const r = spawnSync(process.execPath, [self, join(dir, f)], { stdio: 'inherit' });
      if (r.status !== 0) failed++;
    }
    process.exitCode = failed === 0 ? 0 : 1;
  }
}
