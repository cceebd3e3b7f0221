import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ts from 'typescript';
import { iterateBatches } from '../../src/protocol/record-batch.js';
import { logConfig } from '../../src/storage/log-config.js';
import { PartitionLog } from '../../src/storage/partition-log.js';
import { removeDir, tempDir } from './helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const KILLS = 30;

/** Transpiles src/storage, src/config and src/protocol to JS under .cache/ (inside the repo so node_modules resolve). */
async function compileSources(out: string): Promise<void> {
  const walk = async (d: string): Promise<string[]> => {
    const out: string[] = [];
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) out.push(...(await walk(p)));
      else if (e.name.endsWith('.ts')) out.push(p);
    }
    return out;
  };
  const files = [...(await walk(join(ROOT, 'src', 'storage'))), ...(await walk(join(ROOT, 'src', 'config'))), ...(await walk(join(ROOT, 'src', 'protocol'))), ...(await walk(join(ROOT, 'src', 'common')))];
  for (const f of files) {
    const js = ts.transpileModule(await readFile(f, 'utf8'), {
      fileName: f,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const dest = join(out, relative(join(ROOT, 'src'), f)).replace(/\.ts$/, '.js');
    await mkdir(dirname(dest), { recursive: true });
    await writeFile(dest, js);
  }
}

interface Ack {
  base: number;
  last: number;
  bytes: Buffer;
}

function runChild(dist: string, dir: string, run: number, killAfterMs: number): Promise<{ start: number; acks: Ack[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(import.meta.dirname, 'crash-child.mjs'), dist, dir, String(run)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let timer: NodeJS.Timeout | undefined;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (timer === undefined && out.includes('START')) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (_code, signal) => {
      clearTimeout(guard);
      if (timer !== undefined) clearTimeout(timer);
      if (signal !== 'SIGKILL') return reject(new Error(`child exited on its own: ${err}`));
      let start = -1;
      const acks: Ack[] = [];
      for (const line of out.split('\n')) {
        const [kind, a, b, hex] = line.split(' ');
        if (kind === 'START') start = Number(a);
        // a line cut by the kill is not an acknowledgement the parent could have relied on
        if (kind === 'ACK' && hex !== undefined && hex.length % 2 === 0 && line.endsWith(hex)) {
          const bytes = Buffer.from(hex, 'hex');
          if (bytes.length >= 61 && bytes.length === 12 + bytes.readInt32BE(8)) acks.push({ base: Number(a), last: Number(b), bytes });
        }
      }
      resolve({ start, acks });
    });
  });
}

let dist: string;
let dir: string;
beforeAll(async () => {
  dist = join(ROOT, '.cache', `storage-crash-${process.pid}`);
  await compileSources(dist);
  dir = await tempDir('fjord-crash-');
});
afterAll(async () => {
  await removeDir(dist);
  await removeDir(dir);
});

describe('crash safety with real processes', () => {
  it(`keeps every acknowledged batch byte for byte across ${KILLS} SIGKILLs`, async () => {
    const acked = new Map<number, Ack>();
    let maxAcked = -1;
    let seed = 12345;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    let runsWithAcks = 0;
    for (let run = 0; run < KILLS; run++) {
      const { start, acks } = await runChild(dist, dir, run, 20 + Math.floor(rand() * 250));
      if (start >= 0) {
        // offsets continue: recovery kept everything acknowledged before
        expect(start).toBeGreaterThan(maxAcked);
      }
      if (acks.length > 0) runsWithAcks++;
      for (const a of acks) {
        acked.set(a.base, a);
        maxAcked = Math.max(maxAcked, a.last);
      }
    }
    expect(runsWithAcks).toBeGreaterThan(KILLS / 2);
    const log = await PartitionLog.open({ dir, topicId: 'CRASHCRASHCRASHCRASHCR', config: logConfig({ segmentBytes: 16 * 1024, indexIntervalBytes: 512 }) });
    expect(log.logEndOffset).toBeGreaterThan(maxAcked);
    const all: Buffer[] = [];
    let offset = 0;
    while (offset < log.logEndOffset) {
      const r = await log.readToBuffer({ fetchOffset: offset, maxOffset: log.logEndOffset, maxBytes: 1 << 20, minOneMessage: true });
      expect(r.errorCode).toBe(0);
      all.push(r.records);
      const it = iterateBatches(r.records);
      for (const v of it) offset = v.lastOffset + 1;
      expect(it.partialTail).toBe(false);
    }
    const byBase = new Map<number, Buffer>();
    let expectedNext = 0;
    for (const v of iterateBatches(Buffer.concat(all))) {
      expect(v.isValid()).toBe(true);
      expect(v.baseOffset).toBe(expectedNext);
      expectedNext = v.lastOffset + 1;
      byBase.set(v.baseOffset, Buffer.from(v.bytes));
    }
    for (const a of acked.values()) {
      const got = byBase.get(a.base);
      expect(got, `acknowledged batch at ${a.base}`).toBeDefined();
      expect(got!.equals(a.bytes)).toBe(true);
    }
    await log.close();
    // Thirty node processes started and killed in turn: on a loaded machine that alone takes a minute.
  }, 180_000);
});
