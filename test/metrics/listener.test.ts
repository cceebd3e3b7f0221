/**
 * The metrics listener as an operator meets it, on a real node process: a malformed
 * `metrics.listener` refuses to start, the listener answers only GET/HEAD (405 otherwise, it
 * changes nothing), unknown paths are 404, `/status.json` carries the page's data, and a node
 * without the key opens no HTTP port at all.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, freePort, ROOT, startNode, type RunningNode } from '../helpers/node.js';

let node: RunningNode;
let port: number;

beforeAll(async () => {
  port = await freePort();
  node = await startNode({ overrides: { 'metrics.listener': `http://127.0.0.1:${port}` } });
}, 60_000);

afterAll(async () => {
  await node?.destroy();
});

describe('metrics.listener', () => {
  it('refuses to start with a malformed value', async () => {
    ensureBuilt();
    const dir = mkdtempSync(join(tmpdir(), 'fjord-bad-metrics-'));
    const child = spawn(process.execPath, [join(ROOT, 'bin/fjord.js'), 'start', '--override', `listeners=PLAINTEXT://127.0.0.1:${await freePort()}`, '--override', `log.dirs=${dir}`, '--override', 'metrics.listener=ftp://127.0.0.1:1'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(1);
    expect(stderr).toContain("Invalid value 'ftp://127.0.0.1:1' for metrics.listener: expected http://host:port");
    expect(stderr).not.toContain('node started');
  });

  it('is read-only', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
    }
    const head = await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect((await fetch(`http://127.0.0.1:${port}/nope`)).status).toBe(404);
  });

  it('serves the status data as JSON', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/status.json`);
    expect(res.headers.get('content-type')).toBe('application/json');
    const s = (await res.json()) as { nodeId: number; advertised: string; cluster: { brokers: { nodeId: number; port: number }[] }; mirrors: unknown[] };
    expect(s.nodeId).toBe(1);
    expect(s.advertised).toBe(node.bootstrap);
    expect(s.cluster.brokers).toEqual([expect.objectContaining({ nodeId: 1, port: node.port })]);
    expect(s.mirrors).toEqual([]);
  });

  it('is not started without the key', async () => {
    const plain = await startNode();
    try {
      expect(plain.logs()).not.toContain('metrics listener started');
      expect(node.logs()).toContain(`"url":"http://127.0.0.1:${port}/metrics"`);
    } finally {
      await plain.destroy();
    }
  });
});
