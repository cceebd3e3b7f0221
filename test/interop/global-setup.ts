/**
 * Once per interop run: compile Fjord to dist/ (unless it is already built from the current
 * sources), start the shared Apache Kafka broker, and at the end stop it.
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startKafkaBroker } from './kafka-broker.js';
import { KAFKA_VERSION, REPORT_DIR, ROOT } from './lib/paths.js';
import { isBuilt, markBuilt } from '../helpers/node.js';
import { run, tail } from './lib/run.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBootstrap: string;
    kafkaVersion: string;
    /** Empty when dist/ was built; otherwise why the Fjord side cannot start. */
    fjordBuildProblem: string;
  }
}

async function buildFjord(): Promise<string> {
  // `npm test` ran just before on CI and its node tests built dist/ from these same sources.
  if (isBuilt()) return '';
  const started = Date.now();
  // tsc still emits when a file in progress elsewhere has a type error, so dist/ decides, not the exit code.
  const r = await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    timeoutMs: 300_000,
  });
  if (!existsSync(join(ROOT, 'dist/cli/main.js'))) return `npm run build produced no dist/cli/main.js:\n${tail(r.stdout)}`;
  if (r.code !== 0) console.warn(`[interop] tsc reported errors but emitted dist/:\n${tail(r.stdout, 10)}`);
  else markBuilt(started);
  return '';
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  rmSync(REPORT_DIR, { recursive: true, force: true });
  mkdirSync(REPORT_DIR, { recursive: true });
  const started = Date.now();
  // Formatting the broker's storage and starting its JVM overlap with the build.
  const [fjordBuildProblem, kafka] = await Promise.all([buildFjord(), startKafkaBroker({ version: KAFKA_VERSION })]);
  console.log(`[interop] Apache Kafka ${kafka.version} serving on ${kafka.bootstrap} after ${Date.now() - started} ms`);
  project.provide('kafkaBootstrap', kafka.bootstrap);
  project.provide('kafkaVersion', kafka.version);
  project.provide('fjordBuildProblem', fjordBuildProblem);
  return async () => {
    // The differential report and the closing line come from summary-reporter.ts, which runs before this.
    await kafka.stop();
  };
}
