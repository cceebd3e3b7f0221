/**
 * Logs people can read: `log.format=text` prints one human line per record from a real node
 * process, and `fjord.slow.request.ms` logs slow requests with the API, version, client id and
 * partition count (threshold 0: every request is slow). The JSON format stays the default.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createLogger, formatText } from '../../src/common/logger.js';
import { ensureBuilt, freePort, ROOT, startNode } from '../helpers/node.js';
import { waitFor } from '../helpers/wait.js';

describe('log.format=text', () => {
  it('prints readable lines from a real node, and slow requests with their API, client id and partitions', async () => {
    ensureBuilt();
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'fjord-logs-'));
    const args = ['start', '--override', `listeners=PLAINTEXT://127.0.0.1:${port}`, '--override', `log.dirs=${dataDir}`, '--override', 'log.format=text', '--override', 'fjord.slow.request.ms=0'];
    const child = spawn(process.execPath, [join(ROOT, 'bin/fjord.js'), ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const exited = new Promise((r) => child.once('exit', r));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          if (/ INFO {2}node started /.test(stderr)) resolve();
        });
        child.once('exit', (code) => reject(new Error(`node exited with ${code}:\n${stderr}`)));
      });
      const kafka = new Kafka({ clientId: 'slow-probe', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING });
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic: 'logs-probe', messages: [{ value: 'x' }] });
      await producer.disconnect();
      await waitFor('the slow request line of the Produce', () => /WARN {2}slow request component=metrics api=Produce /.test(stderr), 20_000);
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
    const started = stderr.split('\n').find((l) => l.includes(' node started '))!;
    expect(started).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z INFO  node started component=fjord nodeId=1 clusterId=\\S+ listeners="PLAINTEXT://127.0.0.1:${port} \\(PLAINTEXT\\)" `));
    const slow = stderr.split('\n').find((l) => l.includes('WARN  slow request component=metrics api=Produce '));
    expect(slow).toMatch(/ api=Produce apiVersion=\d+ clientId=slow-probe client=127\.0\.0\.1:\d+ partitions=1 ms=[\d.]+$/);
    expect(stderr).not.toMatch(/^\{/m);
  });

  it('keeps JSON lines by default', async () => {
    const node = await startNode();
    try {
      const lines = node.logs().split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThan(0);
      for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
      expect(node.logs()).not.toContain('slow request');
    } finally {
      await node.destroy();
    }
  });

  it('quotes values with spaces and indents stack traces', () => {
    const lines: string[] = [];
    const log = createLogger({ component: 'x' }, 'info', (l) => lines.push(l), 'text');
    log.warn('request failed', { conn: 'a b', n: 3, err: new Error('boom') });
    expect(lines[0]).toMatch(/^\S+ WARN {2}request failed component=x conn="a b" n=3\n {2}err: Error: boom\n {4,}at /);
    expect(formatText({ ts: 't', level: 'info', msg: 'm', empty: '', obj: { a: 1 } })).toBe('t INFO  m empty="" obj="{\\"a\\":1}"\n');
  });
});
