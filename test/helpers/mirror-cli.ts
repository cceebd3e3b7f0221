/** `fjord cluster-mirrors` run in-process against a node, with its output lines collected. */
import { runClusterMirrorsCli } from '../../src/cli/cluster-mirrors.js';

export interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

export async function clusterMirrors(bootstrap: string, ...argv: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runClusterMirrorsCli(['--bootstrap-server', bootstrap, ...argv], { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
