/**
 * Collects each row's per-round figures for Fjord and its peer, and prints them as a table:
 * min / median / max of each side, and the paired ratio Fjord ÷ peer of the same round (so a
 * slow round on a shared machine slows both sides of its ratio).
 */
export type Side = 'fjord' | 'peer';

export interface RowSpec {
  /** What the row measures, e.g. "produce 100 B acks=1 none 8p". */
  readonly name: string;
  readonly unit: string;
  /** The peer's name in this row: "kafka", "mm2", "raw pipe". */
  readonly peer: string;
  readonly higherIsBetter: boolean;
  /** The durability both sides ran with. */
  readonly durability: string;
}

export interface Row extends RowSpec {
  readonly fjord: number[];
  readonly peerValues: number[];
  /** Broker CPU-seconds per MB (or per GB for mirror rows), per round, where measured. */
  readonly fjordCpu: number[];
  readonly peerCpu: number[];
  readonly cpuUnit: string;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
}

export class Results {
  readonly rows = new Map<string, Row>();

  private row(spec: RowSpec, cpuUnit: string): Row {
    const key = `${spec.durability}|${spec.name}|${spec.peer}`;
    let r = this.rows.get(key);
    if (r === undefined) {
      r = { ...spec, fjord: [], peerValues: [], fjordCpu: [], peerCpu: [], cpuUnit };
      this.rows.set(key, r);
    }
    return r;
  }

  /** Records one round's figure of one side (rounds are paired by their order). */
  add(spec: RowSpec, side: Side, value: number, cpu?: number, cpuUnit = 'CPU-s/MB'): void {
    const r = this.row(spec, cpuUnit);
    (side === 'fjord' ? r.fjord : r.peerValues).push(value);
    if (cpu !== undefined) (side === 'fjord' ? r.fjordCpu : r.peerCpu).push(cpu);
  }

  /** Paired ratios Fjord ÷ peer per round. */
  static ratios(r: Row): number[] {
    const n = Math.min(r.fjord.length, r.peerValues.length);
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((r.fjord[i] ?? NaN) / (r.peerValues[i] ?? NaN));
    return out;
  }

  toJson(): unknown[] {
    return [...this.rows.values()].map((r) => ({
      ...r,
      ratios: Results.ratios(r),
      medianRatio: median(Results.ratios(r)),
      cpuRatio: median(r.fjordCpu) / median(r.peerCpu),
    }));
  }

  /** A Markdown table. */
  table(): string {
    // Three significant figures below 10, so CPU-seconds per MB (often 0.00x) keep their digits.
    const fmt = (x: number): string => (!Number.isFinite(x) ? '–' : Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : Math.abs(x) >= 1 || x === 0 ? x.toFixed(2) : x.toPrecision(3));
    const mmm = (xs: readonly number[]): string => (xs.length === 0 ? '–' : `${fmt(Math.min(...xs))} / **${fmt(median(xs))}** / ${fmt(Math.max(...xs))}`);
    const lines = [
      '| durability | row | unit | Fjord min / median / max | peer | peer min / median / max | Fjord ÷ peer per round (median) | CPU Fjord / peer (median) |',
      '|---|---|---|---|---|---|---|---|',
    ];
    for (const r of this.rows.values()) {
      const ratios = Results.ratios(r);
      const better = r.higherIsBetter ? 'higher is better' : 'lower is better';
      const cpu = r.fjordCpu.length === 0 ? '–' : `${fmt(median(r.fjordCpu))} / ${fmt(median(r.peerCpu))} ${r.cpuUnit}`;
      lines.push(`| ${r.durability} | ${r.name} | ${r.unit} (${better}) | ${mmm(r.fjord)} | ${r.peer} | ${mmm(r.peerValues)} | ${ratios.map(fmt).join(', ')} (**${fmt(median(ratios))}**) | ${cpu} |`);
    }
    return lines.join('\n');
  }
}

/** A record size as the rows name it: "100 B", "1 KiB". */
export function recordSizeLabel(size: number): string {
  return size === 1024 ? '1 KiB' : `${size} B`;
}
