/**
 * A listener the node cannot serve, or one `listener.security.protocol.map` does not name, stops
 * `fjord start` with a message naming the listener, instead of serving the port unprotected.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt, freePort } from '../helpers/node.js';

interface StartOutcome {
  readonly code: number | null;
  readonly stderr: string;
  readonly started: boolean;
}

let dataDir: string;

/** Stops a started node once it accepts a connection (its signal handlers are installed by then). */
function stopWhenServing(kill: () => void, port: number): void {
  const s = connect({ host: '127.0.0.1', port }, () => {
    s.destroy();
    kill();
  });
  s.on('error', () => kill());
}

function start(overrides: Record<string, string>, port = 0): Promise<StartOutcome> {
  const args = [join(ROOT, 'bin/fjord.js'), 'start', '--override', 'node.id=1', '--override', `log.dirs=${dataDir}`];
  for (const [k, v] of Object.entries(overrides)) args.push('--override', `${k}=${v}`);
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let started = false;
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (!started && stderr.includes('"msg":"node started"')) {
      started = true;
      stopWhenServing(() => child.kill('SIGTERM'), port);
    }
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr, started })));
}

beforeAll(() => {
  ensureBuilt();
  dataDir = mkdtempSync(join(tmpdir(), 'fjord-listeners-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('fjord start refuses listeners it cannot serve', () => {
  it('a SASL_SSL listener without a keystore or a mechanism it knows', async () => {
    const port = await freePort();
    const out = await start({ listeners: `SASL_SSL://127.0.0.1:${port}` });
    expect(out.started).toBe(false);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain('listener SASL_SSL');
  });

  it('an SSL listener without a keystore', async () => {
    const port = await freePort();
    const out = await start({ listeners: `SSL://127.0.0.1:${port}` });
    expect(out.started).toBe(false);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain('listener SSL');
    expect(out.stderr).toContain('ssl.keystore');
  });

  it('a listener that listener.security.protocol.map does not name', async () => {
    const port = await freePort();
    const out = await start({ listeners: `INTERNAL://127.0.0.1:${port}` });
    expect(out.started).toBe(false);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain('No security protocol defined for listener INTERNAL');
  });

  it('a map entry that is not a security protocol', async () => {
    const port = await freePort();
    const out = await start({ listeners: `INTERNAL://127.0.0.1:${port}`, 'listener.security.protocol.map': 'INTERNAL:KERBEROS' });
    expect(out.started).toBe(false);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain("maps INTERNAL to 'KERBEROS'");
  });

  it('an inter.broker.listener.name that is not a listener', async () => {
    const port = await freePort();
    const out = await start({ listeners: `PLAINTEXT://127.0.0.1:${port}`, 'inter.broker.listener.name': 'REPLICATION' });
    expect(out.started).toBe(false);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain('inter.broker.listener.name');
  });

  it('still starts a plain PLAINTEXT listener', async () => {
    const port = await freePort();
    const out = await start({ listeners: `PLAINTEXT://127.0.0.1:${port}` }, port);
    expect(out.started).toBe(true);
    expect(out.code).toBe(0);
  });
});
