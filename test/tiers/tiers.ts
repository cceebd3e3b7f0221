/**
 * The test tiers, read from what each test file reaches through its imports, so a new test lands
 * in its tier by what it does, with no list to keep:
 *
 * - unit: nothing but computation, files and timers in the test's own process: no socket (net,
 *   tls, dgram, a Kafka client library) and no other process;
 * - integration: one process: nodes and clients started inside the test's own process, talking
 *   over loopback;
 * - system: everything that starts other processes (Fjord nodes, etcd, Apache Kafka, Java and
 *   Python clients, network namespaces; some of it needs root or a JVM).
 *
 * `npm test` runs every tier; `npm run test:unit` and `npm run test:integration` run one. The
 * interop, fault and image suites have configs of their own and are no tier's.
 */
import { cruise, type IModule } from 'dependency-cruiser';

export type Tier = 'unit' | 'integration' | 'system';

/** Suites with their own vitest config. */
const OWN_SUITES = '^test/(interop|faults|deploy)/';
const PROCESS = /^(node:)?child_process$/;
const SOCKET = /^(node:)?(net|tls|dgram|http|https|http2)$|^node_modules\/kafkajs\//;

/** Every `*.test.ts` of the main suite with its tier. */
export async function testTiers(): Promise<Map<string, Tier>> {
  const result = await cruise(
    ['test'],
    { exclude: { path: OWN_SUITES }, doNotFollow: { path: 'node_modules' }, tsPreCompilationDeps: true },
    undefined,
    { tsConfig: { fileName: 'tsconfig.json' } },
  );
  if (typeof result.output === 'string') throw new Error('dependency-cruiser answered text, not modules');
  const modules = new Map<string, IModule>(result.output.modules.map((m) => [m.source, m]));
  const reach = new Map<string, { process: boolean; socket: boolean }>();
  const reached = (source: string): { process: boolean; socket: boolean } => {
    const known = reach.get(source);
    if (known !== undefined) return known;
    const r = { process: false, socket: false };
    // Set before the walk: an import cycle ends here instead of looping.
    reach.set(source, r);
    for (const d of modules.get(source)?.dependencies ?? []) {
      if (PROCESS.test(d.resolved)) r.process = true;
      else if (SOCKET.test(d.resolved)) r.socket = true;
      else if (modules.has(d.resolved) && !d.resolved.startsWith('node_modules/')) {
        const sub = reached(d.resolved);
        r.process ||= sub.process;
        r.socket ||= sub.socket;
      }
    }
    return r;
  };
  const tiers = new Map<string, Tier>();
  for (const source of modules.keys()) {
    if (!source.startsWith('test/') || !source.endsWith('.test.ts')) continue;
    const r = reached(source);
    tiers.set(source, r.process ? 'system' : r.socket ? 'integration' : 'unit');
  }
  return tiers;
}

export async function testsOfTier(tier: Tier): Promise<string[]> {
  return [...(await testTiers())].filter(([, t]) => t === tier).map(([f]) => f).sort();
}
