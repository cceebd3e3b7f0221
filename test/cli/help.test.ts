/**
 * Every `fjord` command as a real process: `--help` prints its usage and every option and exits
 * 0; an unknown option, a missing value or a stray argument exits 2 with one line naming it (no
 * node is needed: nothing is sent).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../helpers/node.js';

function fjord(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/fjord.js'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => resolve({ code, out, err }));
  });
}

const OPTIONS: Record<string, string[]> = {
  start: ['-c, --config FILE', '--override key=value'],
  topics: ['--bootstrap-server HOST:PORT', '--create', '--list', '--describe', '--delete', '--alter', '--topic T', '--partitions N', '--replication-factor N', '--config k=v', '--if-exists', '--if-not-exists', '--exclude-internal', '--topics-with-overrides', '--under-replicated-partitions', '--json'],
  configs: ['--bootstrap-server HOST:PORT', '--entity-type TYPE', '--entity-name N', '--entity-default', '--describe', '--alter', '--all', '--add-config k=v,k2=v2', '--delete-config k,k2', '--json'],
  groups: ['--bootstrap-server HOST:PORT', '--list', '--describe GROUP', '--state S', '--type T', '--json'],
  'cluster-mirrors': ['--bootstrap-server HOST:PORT', '--command-config FILE', '--create', '--start', '--stop', '--pause', '--resume', '--promote', '--verify', '--list', '--describe', '--delete', '--mirror NAME', '--mirror-config FILE', '--topics LIST', '--exclude LIST', '--json', '--failed', '--watch', '--wait', '--dry-run', '--timeout S', '--interval S'],
};

beforeAll(() => ensureBuilt(), 300_000);

describe('fjord --help', () => {
  it('lists the commands and the exit codes', async () => {
    const r = await fjord('--help');
    expect(r.code).toBe(0);
    for (const c of ['start', 'topics', 'configs', 'groups', 'cluster-mirrors', 'broker-api-versions', 'version']) expect(r.out).toMatch(new RegExp(`^  ${c} `, 'm'));
    expect(r.out).toContain('Exit codes: 0 ok, 1 the request failed, 2 bad usage');
  });

  for (const [command, options] of Object.entries(OPTIONS)) {
    it(`fjord ${command} --help prints its usage and every option`, async () => {
      const r = await fjord(command, '--help');
      expect(r.code).toBe(0);
      expect(r.err).toBe('');
      expect(r.out).toMatch(new RegExp(`^usage: fjord ${command} `));
      const lines = r.out.split('\n');
      for (const o of [...options, '-h, --help']) expect(lines.some((l) => l.startsWith(`  ${o}  `)), o).toBe(true);
      expect(r.out).toContain('exit codes: 0 ok, 1 the request failed (a Kafka error or an unreachable broker), 2 bad usage');
      // -h is the same.
      expect((await fjord(command, '-h')).out).toBe(r.out);
    });
  }
});

describe('bad usage', () => {
  it('exits 2 with one line naming an unknown option, for every command', async () => {
    for (const command of Object.keys(OPTIONS)) {
      const r = await fjord(command, '--bogus');
      expect(r.code, command).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toBe(`fjord ${command}: unknown option '--bogus' (see 'fjord ${command} --help')\n`);
    }
    const main = await fjord('--bogus');
    expect(main.code).toBe(2);
    expect(main.err).toBe("fjord: unknown option '--bogus' (see 'fjord --help')\n");
    expect((await fjord('frobnicate')).err).toBe("fjord: unknown command 'frobnicate' (see 'fjord --help')\n");
  });

  it('names a missing value, a value given to a flag, and a stray argument', async () => {
    expect(await fjord('topics', '--list', '--bootstrap-server')).toMatchObject({ code: 2, err: "fjord topics: --bootstrap-server needs a value (see 'fjord topics --help')\n" });
    expect(await fjord('groups', '--list=yes')).toMatchObject({ code: 2, err: "fjord groups: --list takes no value (see 'fjord groups --help')\n" });
    expect(await fjord('configs', 'extra')).toMatchObject({ code: 2, err: "fjord configs: unexpected argument 'extra' (see 'fjord configs --help')\n" });
    expect(await fjord('start', 'not-a-file')).toMatchObject({ code: 2, err: "fjord start: unexpected argument 'not-a-file' (see 'fjord start --help')\n" });
  });
});
