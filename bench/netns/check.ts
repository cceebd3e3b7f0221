/**
 * Checks the delayed link of ./link.ts on its own: per one-way delay, ping's round trip from the
 * destination's namespace to the source (expected ≈ 2 × delay) and the time one TCP connection
 * takes to carry `--mb` MiB from the source's namespace to the destination's (`dd | socat` into
 * `socat` writing /dev/null), the link's ceiling for a single stream.
 *
 *   node bench/run.mjs bench/netns/check.ts [--delays 0,5,25] [--mb 64] [--mtu 9000] [--rate bits/s]
 */
import { execFileSync, spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { DST_ADDR, DST_NS, DelayLink, SRC_ADDR, SRC_NS, buildDelayLink, setupNamespaces, teardownNamespaces } from './link.js';

const { values: flags } = parseArgs({
  options: {
    delays: { type: 'string', default: '0,5,25' },
    mb: { type: 'string', default: '64' },
    mtu: { type: 'string', default: '9000' },
    rate: { type: 'string', default: '0' },
  },
});
const PORT = 5001;

function ping(): string {
  const out = execFileSync('ip', ['netns', 'exec', DST_NS, 'ping', '-q', '-c', '5', '-i', '0.2', SRC_ADDR], { encoding: 'utf8' });
  return out.split('\n').find((l) => l.startsWith('rtt')) ?? out;
}

/** Seconds for `mb` MiB over one TCP connection, source namespace → destination namespace. */
async function stream(mb: number): Promise<number> {
  const sink = spawn('ip', ['netns', 'exec', DST_NS, 'socat', '-u', `TCP-LISTEN:${PORT},bind=${DST_ADDR},reuseaddr`, 'OPEN:/dev/null'], { stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve) => sink.once('exit', resolve));
  try {
    // Until the listener is up.
    for (let i = 0; ; i++) {
      const ss = execFileSync('ip', ['netns', 'exec', DST_NS, 'ss', '-Hltn', `sport = :${PORT}`], { encoding: 'utf8' });
      if (ss.trim() !== '') break;
      if (i > 200) throw new Error('socat did not listen');
      await new Promise((r) => setTimeout(r, 25));
    }
    const started = process.hrtime.bigint();
    execFileSync('ip', ['netns', 'exec', SRC_NS, 'sh', '-c', `dd if=/dev/zero bs=1M count=${mb} 2>/dev/null | socat -u STDIN TCP:${DST_ADDR}:${PORT}`]);
    const code = await exited;
    if (code !== 0) throw new Error(`socat sink exited with ${code}`);
    return Number(process.hrtime.bigint() - started) / 1e9;
  } finally {
    sink.kill();
  }
}

async function main(): Promise<void> {
  const mb = Number(flags.mb);
  const rate = Number(flags.rate);
  buildDelayLink();
  process.once('exit', teardownNamespaces);
  setupNamespaces(Number(flags.mtu));
  console.log(`| one-way delay | ping (min/avg/max/mdev ms) | ${mb} MiB over one TCP connection | MB/s | held p50 / p99 ms (data direction) | dropped |`);
  console.log('|---|---|---|---|---|---|');
  for (const d of flags.delays.split(',').map(Number)) {
    const link = await DelayLink.start(d, rate > 0 ? { rateBitsPerSec: rate } : {});
    let rtt = '';
    let s = 0;
    try {
      rtt = ping().replace(/^rtt min\/avg\/max\/mdev = /, '');
      s = await stream(mb);
    } finally {
      const stats = await link.stop();
      const data = stats.find((x) => x.direction === 'a→b');
      const dropped = stats.reduce((n, x) => n + x.dropped, 0);
      console.log(`| ${d} ms | ${rtt} | ${s.toFixed(2)} s | ${((mb * 2 ** 20) / 1e6 / s).toFixed(1)} | ${(data?.heldP50Ms ?? NaN).toFixed(2)} / ${(data?.heldP99Ms ?? NaN).toFixed(2)} | ${dropped} |`);
    }
  }
}

await main();
