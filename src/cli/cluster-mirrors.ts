/**
 * `fjord cluster-mirrors`: the flags of Kafka's kafka-cluster-mirrors.sh (KIP-1279 spec §12).
 *
 *   --bootstrap-server HOST:PORT  (the destination, required)   --command-config FILE
 *   --mirror NAME
 *   --create --mirror-config FILE
 *   --start|--stop|--pause|--resume --topics LIST [--exclude LIST (start only)]
 *   --list
 *   --describe [--json] [--failed]
 *   --delete
 *
 * `--topics` takes comma-separated names or regular expressions. For --start they are resolved
 * against the source's topics (and saved as include patterns for later discovery); for the other
 * actions against the mirror's topics on the destination.
 */
import { readFileSync } from 'node:fs';
import { MirrorAdmin, MirrorAdminError, type PartitionMirrorDescription } from '../admin/mirror-admin.js';
import { clientOptionsFromConfig } from '../client/client-options.js';
import { ErrorCode } from '../protocol/generated/errors.js';

interface Args {
  bootstrap?: string;
  commandConfig?: string;
  mirror?: string;
  mirrorConfig?: string;
  topics?: string;
  exclude?: string;
  action?: 'create' | 'start' | 'stop' | 'pause' | 'resume' | 'list' | 'describe' | 'delete';
  json: boolean;
  failed: boolean;
}

const USAGE = `Usage: fjord cluster-mirrors --bootstrap-server HOST:PORT [--command-config FILE] ACTION
Actions:
  --create --mirror NAME --mirror-config FILE
  --start --mirror NAME --topics LIST [--exclude LIST]
  --stop|--pause|--resume --mirror NAME --topics LIST
  --list
  --describe [--mirror NAME] [--json] [--failed]
  --delete --mirror NAME`;

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

const consoleIo: CliIo = { out: (l) => console.log(l), err: (l) => console.error(l) };

function parseArgs(argv: readonly string[]): Args | string {
  const a: Args = { json: false, failed: false };
  const actions = new Set(['create', 'start', 'stop', 'pause', 'resume', 'list', 'describe', 'delete']);
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value`);
      return v;
    };
    try {
      switch (flag) {
        case '--bootstrap-server':
          a.bootstrap = value();
          break;
        case '--command-config':
          a.commandConfig = value();
          break;
        case '--mirror':
          a.mirror = value();
          break;
        case '--mirror-config':
          a.mirrorConfig = value();
          break;
        case '--topics':
          a.topics = value();
          break;
        case '--exclude':
          a.exclude = value();
          break;
        case '--json':
          a.json = true;
          break;
        case '--failed':
          a.failed = true;
          break;
        default: {
          const name = flag.replace(/^--/, '');
          if (!flag.startsWith('--') || !actions.has(name)) return `unknown option ${flag}`;
          if (a.action !== undefined) return `only one action at a time (--${a.action} and ${flag})`;
          a.action = name as NonNullable<Args['action']>;
        }
      }
    } catch (e) {
      return (e as Error).message;
    }
  }
  if (a.bootstrap === undefined) return '--bootstrap-server is required';
  if (a.action === undefined) return 'an action is required';
  const needsMirror = a.action !== 'list' && a.action !== 'describe';
  if (needsMirror && a.mirror === undefined) return `--${a.action} needs --mirror`;
  if (a.action === 'create' && a.mirrorConfig === undefined) return '--create needs --mirror-config';
  if (['start', 'stop', 'pause', 'resume'].includes(a.action) && a.topics === undefined) return `--${a.action} needs --topics`;
  if (a.exclude !== undefined && a.action !== 'start') return '--exclude is only valid with --start';
  if ((a.json || a.failed) && a.action !== 'describe') return '--json and --failed are only valid with --describe';
  return a;
}

/** Java-properties subset: key=value or key:value lines, # and ! comments. */
export function readProperties(file: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of readFileSync(file, 'utf8').split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const m = /^([^=:\s]+)\s*[=:]\s*(.*)$/.exec(line);
    if (m === null) continue;
    out.set(m[1] as string, (m[2] as string).trim());
  }
  return out;
}

const list = (s: string | undefined): string[] => (s ?? '').split(',').map((x) => x.trim()).filter((x) => x !== '');
const isLiteral = (p: string): boolean => /^[A-Za-z0-9._-]+$/.test(p);
const matches = (name: string, patterns: readonly string[]): boolean =>
  patterns.some((p) => {
    try {
      return new RegExp(`^(?:${p})$`).test(name);
    } catch {
      return false;
    }
  });

function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd());
}

export async function runClusterMirrorsCli(argv: readonly string[], io: CliIo = consoleIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.out(USAGE);
    return 0;
  }
  const parsed = parseArgs(argv);
  if (typeof parsed === 'string') {
    io.err(`fjord cluster-mirrors: ${parsed}`);
    io.err(USAGE);
    return 2;
  }
  const a = parsed;
  const clientCfg = a.commandConfig !== undefined ? readProperties(a.commandConfig) : new Map<string, string>();
  clientCfg.set('bootstrap.servers', a.bootstrap as string);
  const admin = new MirrorAdmin(clientOptionsFromConfig(clientCfg, 'fjord-mirror-admin'));
  const mirror = a.mirror as string;
  try {
    switch (a.action) {
      case 'create': {
        const cfg = readProperties(a.mirrorConfig as string);
        await admin.createClusterMirror(mirror, Object.fromEntries(cfg));
        io.out(`Created cluster mirror ${mirror}.`);
        return 0;
      }
      case 'start':
        return await start(admin, mirror, list(a.topics), list(a.exclude), io);
      case 'stop':
      case 'pause':
      case 'resume': {
        const patterns = list(a.topics);
        const bound = (await admin.listClusterMirrors(true)).find((m) => m.mirrorName === mirror);
        if (bound === undefined) throw new MirrorAdminError(ErrorCode.UNKNOWN_CLUSTER_MIRROR, `unknown cluster mirror ${mirror}`);
        // Stop also reaches topics already stopped (a no-op) and takes the patterns out of discovery.
        const names = [...new Set([...patterns.filter(isLiteral), ...bound.topicNames.filter((t) => matches(t, patterns))])];
        if (names.length === 0 && a.action !== 'stop') {
          io.err(`No topic of mirror ${mirror} matches ${patterns.join(',')}.`);
          return 1;
        }
        const outcome =
          a.action === 'stop'
            ? await admin.stopMirrorTopics(mirror, names, { patterns: patterns.filter((p) => !isLiteral(p)) })
            : a.action === 'pause'
              ? await admin.pauseMirrorTopics(mirror, names)
              : await admin.resumeMirrorTopics(mirror, names);
        const verb = a.action === 'stop' ? 'Stopped' : a.action === 'pause' ? 'Paused' : 'Resumed';
        for (const t of outcome) io.out(`${verb} mirroring of topic ${t.name}.`);
        return 0;
      }
      case 'list': {
        const mirrors = await admin.listClusterMirrors(true);
        io.out(table([['MIRROR', 'TOPICS', 'SOURCE-CLUSTER-ID', 'SOURCE-BOOTSTRAP-SERVER'], ...mirrors.map((m) => [m.mirrorName, String(m.topicCount), m.sourceClusterId, m.sourceBootstrap])]).join('\n'));
        return 0;
      }
      case 'describe': {
        const mirrors = await admin.describeClusterMirrors(a.mirror !== undefined ? [mirror] : []);
        const bad = mirrors.find((m) => m.errorCode !== ErrorCode.NONE);
        if (bad !== undefined) throw new MirrorAdminError(bad.errorCode, `mirror ${bad.mirrorName}`);
        const rows: (PartitionMirrorDescription & { mirror: string })[] = [];
        for (const m of mirrors) for (const p of m.partitions) if (!a.failed || p.state === 'FAILED') rows.push({ mirror: m.mirrorName, ...p });
        if (a.json) {
          io.out(JSON.stringify(rows.map((r) => ({ mirror: r.mirror, topic: r.topic, partition: r.partition, sourceOffset: r.sourceOffset, destinationOffset: r.destinationOffset, lag: r.lag, state: r.state, retryAttempt: r.retryAttempt, errorMessage: r.errorMessage }))));
          return 0;
        }
        const header = ['MIRROR', 'TOPIC', 'PARTITION', 'SOURCE-OFFSET', 'DESTINATION-OFFSET', 'LAG', 'STATE'];
        if (a.failed) header.push('RETRY', 'ERROR');
        const body = rows.map((r) => {
          const row = [r.mirror, r.topic, String(r.partition), offset(r.sourceOffset), offset(r.destinationOffset), offset(r.lag), r.state];
          if (a.failed) row.push(r.retryAttempt < 0 ? 'NonRetryable' : String(r.retryAttempt), r.errorMessage ?? '');
          return row;
        });
        io.out(table([header, ...body]).join('\n'));
        return 0;
      }
      case 'delete':
        await admin.deleteClusterMirror(mirror);
        io.out(`Deleted cluster mirror ${mirror}.`);
        return 0;
      default:
        return 2;
    }
  } catch (e) {
    if (e instanceof MirrorAdminError) {
      io.err(`Error: ${e.message}`);
      for (const t of e.topics) if (t.errorCode !== ErrorCode.NONE) io.err(`  ${t.name}: ${t.errorMessage ?? t.errorCode}`);
    } else io.err(`Error: ${(e as Error).message}`);
    return 1;
  } finally {
    admin.close();
  }
}

function offset(n: number): string {
  return n < 0 ? '-' : String(n);
}

async function start(admin: MirrorAdmin, mirror: string, patterns: string[], exclude: string[], io: CliIo): Promise<number> {
  // Resolve patterns against the source's topics (from the mirror's bootstrap.servers).
  const cfg = await admin.describeMirrorConfig(mirror);
  const srcBootstrap = cfg.find((c) => c.name === 'bootstrap.servers')?.value;
  let names = patterns.filter(isLiteral);
  // A secured source's credentials are never shown (DescribeConfigs hides them), so this command
  // cannot list its topics: the node, which holds them, resolves the patterns by discovery.
  let source: MirrorAdmin | null = null;
  if (srcBootstrap != null && patterns.some((p) => !isLiteral(p))) {
    try {
      source = new MirrorAdmin(clientOptionsFromConfig(new Map(cfg.filter((c) => c.value !== null && !c.isDefault).map((c) => [c.name, c.value as string])), `fjord-mirror-${mirror}`));
    } catch {
      source = null;
    }
  }
  if (source !== null) {
    try {
      const all = await source.listTopics();
      names = [...new Set([...names, ...all.filter((t) => matches(t, patterns) && !t.startsWith('__'))])];
    } finally {
      source.close();
    }
  }
  names = names.filter((n) => !matches(n, exclude));
  const includePatterns = patterns.filter((p) => !isLiteral(p));
  if (names.length === 0) {
    await admin.startMirrorTopics(mirror, [], { includePatterns, excludePatterns: exclude });
    io.out(source === null && includePatterns.length > 0 ? 'The patterns were saved; the node starts the source topics they match as it discovers them.' : `No source topic matches yet; the patterns were saved for discovery.`);
    return 0;
  }
  const outcome = await admin.startMirrorTopics(mirror, names, { includePatterns, excludePatterns: exclude });
  for (const t of outcome) io.out(`Started mirroring of topic ${t.name}.`);
  return 0;
}
