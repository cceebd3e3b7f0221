/**
 * `fjord start` and signals: a SIGTERM that arrives while the node is still starting stops it
 * cleanly once it is up (exit 0, "shutdown complete"), as one after start does, instead of the
 * process dying of the signal with its logs unflushed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt, freePort } from '../helpers/node.js';

let dataDir: string;

beforeAll(() => {
  ensureBuilt();
  dataDir = mkdtempSync(join(tmpdir(), 'fjord-start-signals-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Starts a node and sends SIGTERM as soon as its stderr shows `line`. */
async function termOn(line: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const port = await freePort();
  const args = [join(ROOT, 'bin/fjord.js'), 'start', '--override', 'node.id=1', '--override', `log.dirs=${dataDir}`, '--override', `listeners=PLAINTEXT://127.0.0.1:${port}`];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let sent = false;
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (!sent && stderr.includes(line)) {
      sent = true;
      child.kill('SIGTERM');
    }
  });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, stderr })));
}

describe('fjord start', () => {
  it('shuts down cleanly on a SIGTERM that arrives while it is starting', async () => {
    const out = await termOn('"msg":"opening partition logs"');
    expect(out.signal).toBeNull();
    expect(out.code).toBe(0);
    expect(out.stderr).toContain('"msg":"stop requested while starting; stopping once started"');
    expect(out.stderr).toContain('"msg":"node started"');
    expect(out.stderr).toContain('"msg":"shutdown complete"');
  });

  it('shuts down cleanly on a SIGTERM right after "node started"', async () => {
    const out = await termOn('"msg":"node started"');
    expect(out.signal).toBeNull();
    expect(out.code).toBe(0);
    expect(out.stderr).toContain('"msg":"shutdown complete"');
  });
});
