/**
 * Kafka's offset checkpoint files (OffsetCheckpointFile: `recovery-point-offset-checkpoint` and
 * `log-start-offset-checkpoint` in each log dir): version 0, a count, then one
 * `<topic> <partition> <offset>` line per partition.
 */

export interface PartitionKey {
  readonly topic: string;
  readonly partition: number;
}

/** `<topic>-<partition>` → its parts, or null for a directory that is no partition. */
export function parsePartitionDir(name: string): PartitionKey | null {
  const m = /^(.+)-(\d+)$/.exec(name);
  if (m === null) return null;
  return { topic: m[1] as string, partition: Number(m[2]) };
}

/** The file's entries keyed by `<topic>-<partition>`; an unknown version reads as empty. */
export function parseOffsetCheckpoint(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const lines = text.split('\n');
  if (lines[0] !== '0') return out;
  const n = Number(lines[1]);
  for (let i = 0; i < n; i++) {
    const parts = (lines[2 + i] ?? '').trim().split(/\s+/);
    if (parts.length !== 3) continue;
    out.set(`${parts[0]}-${parts[1]}`, Number(parts[2]));
  }
  return out;
}

export function formatOffsetCheckpoint(entries: readonly (readonly [PartitionKey, number])[]): string {
  return `0\n${entries.length}\n${entries.map(([k, o]) => `${k.topic} ${k.partition} ${o}\n`).join('')}`;
}
