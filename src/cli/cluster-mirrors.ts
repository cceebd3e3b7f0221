/**
 * `fjord cluster-mirrors`: the flags of Kafka's kafka-cluster-mirrors.sh (KIP-1279 spec §12),
 * read as every `fjord` command reads its arguments (./cli-common.ts), plus the operator commands of docs/mirroring.md: a live
 * `--describe --watch`, `--start --wait` and a graceful `--promote` with catch-up progress
 * (./mirror-progress.ts, ./mirror-promote.ts).
 *
 * `--topics` takes comma-separated names or regular expressions. For --start they are resolved
 * against the source's topics (and saved as include patterns for later discovery); for the other
 * actions against the mirror's topics on the destination.
 *
 * `--verify` compares the two logs batch by batch (./mirror-verify.ts).
 *
 * Exit codes: 0 done, 1 a Kafka error, a failed partition, a timeout or a --verify difference,
 * 2 bad usage.
 */
import { MirrorAdmin, MirrorAdminError, type PartitionMirrorDescription } from '../admin/mirror-admin.js';
import { clientOptionsFromConfig, type KafkaClientOptions } from '../client/client-options.js';
import { KafkaClient } from '../client/kafka-client.js';
import { ErrorCode } from '../protocol/generated/errors.js';
import { KafkaError } from '../protocol/kafka-error.js';
import { Exit, UsageError, parseCommand, usageLine, type CommandSpec, type OptionSpecs, type Values } from './cli-common.js';
import { readPropertiesFile } from './config-sources.js';
import { confirmAfterTimeout } from './mirror-confirm.js';
import { startDryRun, stopDryRun } from './mirror-dry-run.js';
import { promote, waitUntilMirrored, watch } from './mirror-promote.js';
import { describeTable, table, type CliIo, type MirrorRow } from './mirror-progress.js';
import { verifyMirror } from './mirror-verify.js';

export type { CliIo };

const SPEC = {
  command: 'cluster-mirrors',
  synopsis: `usage: fjord cluster-mirrors --bootstrap-server HOST:PORT [--command-config FILE] ACTION [OPTIONS]

actions (one at a time):
  --create  --mirror NAME --mirror-config FILE   create a mirror of the cluster named in FILE
  --start   --mirror NAME --topics LIST [--exclude LIST] [--wait [--timeout S] | --dry-run]
                                                 start mirroring topics (names or regexes,
                                                 resolved on the source); --wait shows catch-up
                                                 progress until every partition has lag 0;
                                                 --dry-run prints what the start would truncate
                                                 per partition (failback) and changes nothing
  --stop    --mirror NAME --topics LIST [--dry-run]
                                                 stop mirroring (failover): topics become writable;
                                                 --dry-run prints what the stop would do per
                                                 partition (transactions aborted) and changes nothing
  --pause   --mirror NAME --topics LIST          pause fetching; topics stay read-only
  --resume  --mirror NAME --topics LIST          resume paused topics
  --promote --mirror NAME --topics LIST [--timeout S]
                                                 graceful failover: wait for lag 0, then stop
                                                 (the stop syncs group offsets a last time)
  --verify  --mirror NAME [--topics LIST]        compare the destination with the source batch by
                                                 batch (xxhash64 of each batch's bytes) over the
                                                 range both hold; prints the first differing
                                                 offset per partition
  --list                                         list mirrors
  --describe [--mirror NAME] [--json] [--failed] [--watch [--interval S]]
                                                 partition states, offsets and lag; --watch
                                                 redraws a live view with catch-up progress
  --delete  --mirror NAME                        delete a mirror whose topics are all stopped

A failed partition, a wait that times out and a --verify difference also exit 1.`,
  options: {
    'bootstrap-server': { type: 'string' },
    'command-config': { type: 'string' },
    create: { type: 'boolean' },
    start: { type: 'boolean' },
    stop: { type: 'boolean' },
    pause: { type: 'boolean' },
    resume: { type: 'boolean' },
    promote: { type: 'boolean' },
    verify: { type: 'boolean' },
    list: { type: 'boolean' },
    describe: { type: 'boolean' },
    delete: { type: 'boolean' },
    mirror: { type: 'string' },
    'mirror-config': { type: 'string' },
    topics: { type: 'string' },
    exclude: { type: 'string' },
    json: { type: 'boolean' },
    failed: { type: 'boolean' },
    watch: { type: 'boolean' },
    wait: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    timeout: { type: 'string' },
    interval: { type: 'string' },
  },
  help: {
    'bootstrap-server': ['HOST:PORT', 'the destination cluster (required)'],
    'command-config': ['FILE', 'client properties (security.protocol, sasl.*, ssl.*)'],
    create: 'create a mirror',
    start: 'start mirroring topics',
    stop: 'stop mirroring topics (failover)',
    pause: 'pause fetching',
    resume: 'resume paused topics',
    promote: 'wait for lag 0, then stop',
    verify: 'compare the destination with the source',
    list: 'list mirrors',
    describe: 'partition states, offsets and lag',
    delete: 'delete a mirror whose topics are all stopped',
    mirror: ['NAME', 'the mirror'],
    'mirror-config': ['FILE', 'the mirror\'s source connection (properties), for --create'],
    topics: ['LIST', 'comma-separated topic names or regular expressions'],
    exclude: ['LIST', 'topics --start leaves out'],
    json: '--describe as JSON',
    failed: '--describe only FAILED partitions, with RETRY and ERROR',
    watch: '--describe redrawn live with catch-up progress',
    wait: '--start waits for lag 0 on every partition, showing progress',
    'dry-run': '--start and --stop print what they would do and change nothing',
    timeout: ['S', 'seconds --wait and --promote wait for lag 0, and --start, --stop, --pause and --resume wait for each topic to show the change when the node does not answer within request.timeout.ms (default 300)'],
    interval: ['S', 'seconds between --watch redraws (default 1)'],
  },
} as const satisfies CommandSpec<OptionSpecs>;

const ACTIONS = ['create', 'start', 'stop', 'pause', 'resume', 'list', 'describe', 'delete', 'promote', 'verify'] as const;
type Action = (typeof ACTIONS)[number];

interface Args {
  bootstrap: string;
  commandConfig?: string;
  mirror?: string;
  mirrorConfig?: string;
  topics?: string;
  exclude?: string;
  action: Action;
  json: boolean;
  failed: boolean;
  watch: boolean;
  wait: boolean;
  dryRun: boolean;
  timeoutS: number;
  intervalMs: number;
}

const consoleIo: CliIo = {
  out: (l) => console.log(l),
  err: (l) => console.error(l),
  write: (t) => void process.stdout.write(t),
  isTTY: process.stdout.isTTY === true,
};

function positiveSeconds(flag: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} needs a positive number of seconds, got '${v}'`);
  return n;
}

/** What the options ask for, checked as a whole (one action, and only the options it takes). */
function toArgs(v: Values<typeof SPEC.options>): Args {
  const chosen = ACTIONS.filter((a) => v[a] === true);
  const bootstrap = v['bootstrap-server'];
  if (bootstrap === undefined) throw new UsageError('--bootstrap-server is required');
  if (chosen.length === 0) throw new UsageError('an action is required');
  if (chosen.length > 1) throw new UsageError(`only one action at a time (${chosen.map((a) => `--${a}`).join(' and ')})`);
  const action = chosen[0] as Action;
  const a: Args = {
    bootstrap,
    action,
    json: v.json === true,
    failed: v.failed === true,
    watch: v.watch === true,
    wait: v.wait === true,
    dryRun: v['dry-run'] === true,
    timeoutS: positiveSeconds('--timeout', v.timeout, 300),
    intervalMs: positiveSeconds('--interval', v.interval, 1) * 1000,
  };
  for (const [k, key] of [['command-config', 'commandConfig'], ['mirror', 'mirror'], ['mirror-config', 'mirrorConfig'], ['topics', 'topics'], ['exclude', 'exclude']] as const) {
    const value = v[k];
    if (value !== undefined) a[key] = value;
  }
  const needsMirror = action !== 'list' && action !== 'describe';
  if (needsMirror && a.mirror === undefined) throw new UsageError(`--${action} needs --mirror`);
  if (action === 'create' && a.mirrorConfig === undefined) throw new UsageError('--create needs --mirror-config');
  if (['start', 'stop', 'pause', 'resume', 'promote'].includes(action) && a.topics === undefined) throw new UsageError(`--${action} needs --topics`);
  if (a.exclude !== undefined && action !== 'start') throw new UsageError('--exclude is only valid with --start');
  if ((a.json || a.failed || a.watch) && action !== 'describe') throw new UsageError('--json, --failed and --watch are only valid with --describe');
  if (a.watch && a.json) throw new UsageError('--watch draws for a terminal; it does not take --json');
  if (a.wait && action !== 'start') throw new UsageError('--wait is only valid with --start');
  if (a.dryRun && action !== 'stop' && action !== 'start') throw new UsageError('--dry-run is only valid with --stop and --start');
  if (a.dryRun && a.wait) throw new UsageError('--dry-run changes nothing, so there is nothing to --wait for');
  if (v.timeout !== undefined && !['start', 'stop', 'pause', 'resume', 'promote'].includes(action)) throw new UsageError('--timeout is only valid with --start, --stop, --pause, --resume and --promote');
  if (v.interval !== undefined && !a.watch) throw new UsageError('--interval is only valid with --describe --watch');
  return a;
}

/** A properties file as a map (Java-properties syntax, as `fjord start` reads its config). */
function readProperties(file: string): Map<string, string> {
  return new Map(readPropertiesFile(file));
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

export async function runClusterMirrorsCli(argv: readonly string[], io: CliIo = consoleIo): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io);
  if ('exit' in parsed) return parsed.exit;
  let a: Args;
  try {
    a = toArgs(parsed.values);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(usageLine(SPEC.command, e.message));
    return Exit.USAGE;
  }
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
        return Exit.OK;
      }
      case 'start': {
        if (a.dryRun) return await startDryRunCommand(admin, clientCfg, mirror, list(a.topics), list(a.exclude), io);
        const { started, exit } = await start(admin, mirror, list(a.topics), list(a.exclude), a.timeoutS, io);
        if (exit !== Exit.OK || !a.wait || started.length === 0) return exit;
        return await waitUntilMirrored(admin, mirror, started, a.timeoutS, io);
      }
      case 'promote': {
        const patterns = list(a.topics);
        const { names } = await boundTopics(admin, mirror, patterns);
        if (names.length === 0) {
          io.err(`No topic of mirror ${mirror} matches ${patterns.join(',')}.`);
          return Exit.KAFKA_ERROR;
        }
        return await promote(admin, mirror, names, a.timeoutS, io);
      }
      case 'verify': {
        const patterns = a.topics !== undefined ? list(a.topics) : ['.*'];
        const destination = new KafkaClient(clientOptionsFromConfig(clientCfg, 'fjord-mirror-verify'));
        const source = new KafkaClient(await sourceClientOptions(admin, mirror, 'fjord-mirror-verify'));
        try {
          return await verifyMirror(admin, destination, source, mirror, (t) => matches(t, patterns), io);
        } finally {
          destination.close();
          source.close();
        }
      }
      case 'stop':
      case 'pause':
      case 'resume': {
        const patterns = list(a.topics);
        // Stop also reaches topics already stopped (a no-op) and takes the patterns out of discovery.
        const { names, stateOffset } = await boundTopics(admin, mirror, patterns);
        const lock = { stateValidationOffset: stateOffset };
        if (a.dryRun) return await stopDryRun(admin, mirror, names, io);
        if (names.length === 0 && a.action !== 'stop') {
          io.err(`No topic of mirror ${mirror} matches ${patterns.join(',')}.`);
          return 1;
        }
        let outcome;
        try {
          outcome =
            a.action === 'stop'
              ? await admin.stopMirrorTopics(mirror, names, { patterns: patterns.filter((p) => !isLiteral(p)), ...lock })
              : a.action === 'pause'
                ? await admin.pauseMirrorTopics(mirror, names, lock)
                : await admin.resumeMirrorTopics(mirror, names, lock);
        } catch (e) {
          const timedOut = clientTimeout(e);
          if (timedOut === null) throw e;
          return await confirmAfterTimeout(admin, mirror, a.action, names, a.timeoutS, timedOut, io);
        }
        const verb = a.action === 'stop' ? 'Stopped' : a.action === 'pause' ? 'Paused' : 'Resumed';
        for (const t of outcome) io.out(`${verb} mirroring of topic ${t.name}.`);
        return Exit.OK;
      }
      case 'list': {
        const mirrors = await admin.listClusterMirrors(true);
        io.out(table([['MIRROR', 'TOPICS', 'SOURCE-CLUSTER-ID', 'SOURCE-BOOTSTRAP-SERVER'], ...mirrors.map((m) => [m.mirrorName, String(m.topicCount), m.sourceClusterId, m.sourceBootstrap])]).join('\n'));
        return Exit.OK;
      }
      case 'describe': {
        if (a.watch) return await watch(admin, a.mirror !== undefined ? [mirror] : [], a.failed, a.intervalMs, io);
        const mirrors = await admin.describeClusterMirrors(a.mirror !== undefined ? [mirror] : []);
        const bad = mirrors.find((m) => m.errorCode !== ErrorCode.NONE);
        if (bad !== undefined) throw new MirrorAdminError(bad.errorCode, `mirror ${bad.mirrorName}`);
        const rows: MirrorRow[] = [];
        for (const m of mirrors) {
          for (const p of m.partitions) if (!a.failed || p.state === 'FAILED') rows.push({ mirror: m.mirrorName, ...p });
          // A topic no node reported a partition of (its leaders are down or still loading) still
          // shows, with its desired state.
          const shown = new Set(m.partitions.map((p) => p.topic));
          if (!a.failed) for (const [topic, desiredState] of m.desiredStates) if (!shown.has(topic)) rows.push({ mirror: m.mirrorName, ...unreportedTopic(topic, desiredState) });
        }
        rows.sort((x, y) => (x.mirror !== y.mirror ? (x.mirror < y.mirror ? -1 : 1) : x.topic !== y.topic ? (x.topic < y.topic ? -1 : 1) : x.partition - y.partition));
        if (a.json) {
          const now = Date.now();
          io.out(
            JSON.stringify(
              rows.map((r) => ({
                mirror: r.mirror,
                topic: r.topic,
                partition: r.partition,
                sourceOffset: r.sourceOffset,
                destinationOffset: r.destinationOffset,
                lag: r.lag,
                state: r.state,
                desiredState: r.desiredState,
                retryAttempt: r.retryAttempt,
                errorMessage: r.errorMessage,
                timeLagMs: r.timeLagMs,
                sourceMaxTimestamp: r.sourceMaxTimestamp,
                mirroredMaxTimestamp: r.mirroredMaxTimestamp,
                lastFetchTimestamp: r.lastFetchTimestamp,
                lastFetchAgeMs: r.lastFetchTimestamp < 0 ? -1 : Math.max(0, now - r.lastFetchTimestamp),
                linkError: r.linkError,
              })),
            ),
          );
          return Exit.OK;
        }
        io.out(describeTable(rows, a.failed).join('\n'));
        return Exit.OK;
      }
      case 'delete':
        await admin.deleteClusterMirror(mirror);
        io.out(`Deleted cluster mirror ${mirror}.`);
        return Exit.OK;
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

/**
 * The mirror's topics on this cluster matching `patterns` (and the literal names among them),
 * with the metadata offset they were read at: sent back as StateValidationOffset, a change
 * another operator made since is refused with INVALID_CLUSTER_MIRROR_STATES.
 */
async function boundTopics(admin: MirrorAdmin, mirror: string, patterns: readonly string[]): Promise<{ names: string[]; stateOffset: number }> {
  const bound = (await admin.listClusterMirrors(true)).find((m) => m.mirrorName === mirror);
  if (bound === undefined) throw new MirrorAdminError(ErrorCode.UNKNOWN_CLUSTER_MIRROR, `unknown cluster mirror ${mirror}`);
  return { names: [...new Set([...patterns.filter(isLiteral), ...bound.topicNames.filter((t) => matches(t, patterns))])], stateOffset: bound.stateOffset };
}

/**
 * Client options for the mirror's source, from its CLUSTER_MIRROR configs. A secured source's
 * credentials are never shown (DescribeConfigs hides them), so only an open source is reached.
 */
async function sourceClientOptions(admin: MirrorAdmin, mirror: string, clientId: string): Promise<KafkaClientOptions> {
  const cfg = await admin.describeMirrorConfig(mirror);
  return clientOptionsFromConfig(new Map(cfg.filter((c) => c.value !== null && !c.isDefault).map((c) => [c.name, c.value as string])), clientId);
}

/** The source topics `patterns` name, minus `exclude`; `listed` when the source's topics could be listed. */
async function resolveStartTopics(admin: MirrorAdmin, mirror: string, patterns: string[], exclude: string[]): Promise<{ names: string[]; listed: boolean }> {
  // Resolve patterns against the source's topics (from the mirror's bootstrap.servers).
  let names = patterns.filter(isLiteral);
  // A secured source's credentials are never shown (DescribeConfigs hides them), so this command
  // cannot list its topics: the node, which holds them, resolves the patterns by discovery.
  let source: MirrorAdmin | null = null;
  if (patterns.some((p) => !isLiteral(p))) {
    try {
      source = new MirrorAdmin(await sourceClientOptions(admin, mirror, `fjord-mirror-${mirror}`));
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
  return { names: names.filter((n) => !matches(n, exclude)), listed: source !== null };
}

/**
 * A request the client stopped waiting for (request.timeout.ms): the message, else null. A
 * REQUEST_TIMED_OUT the node answered is an answer (a MirrorAdminError), not this.
 */
function clientTimeout(e: unknown): string | null {
  return e instanceof KafkaError && !(e instanceof MirrorAdminError) && e.code === ErrorCode.REQUEST_TIMED_OUT ? e.message : null;
}

/** Starts the topics; returns the names started. */
async function start(admin: MirrorAdmin, mirror: string, patterns: string[], exclude: string[], timeoutS: number, io: CliIo): Promise<{ started: string[]; exit: number }> {
  const { names, listed } = await resolveStartTopics(admin, mirror, patterns, exclude);
  const includePatterns = patterns.filter((p) => !isLiteral(p));
  if (names.length === 0) {
    await admin.startMirrorTopics(mirror, [], { includePatterns, excludePatterns: exclude });
    io.out(!listed && includePatterns.length > 0 ? 'The patterns were saved; the node starts the source topics they match as it discovers them.' : `No source topic matches yet; the patterns were saved for discovery.`);
    return { started: [], exit: Exit.OK };
  }
  let outcome;
  try {
    outcome = await admin.startMirrorTopics(mirror, names, { includePatterns, excludePatterns: exclude });
  } catch (e) {
    const timedOut = clientTimeout(e);
    if (timedOut === null) throw e;
    return { started: names, exit: await confirmAfterTimeout(admin, mirror, 'start', names, timeoutS, timedOut, io) };
  }
  for (const t of outcome) io.out(`Started mirroring of topic ${t.name}.`);
  return { started: outcome.map((t) => t.name), exit: Exit.OK };
}

/** `--start … --dry-run`: what the start would truncate, per partition; changes nothing. */
async function startDryRunCommand(admin: MirrorAdmin, clientCfg: ReadonlyMap<string, string>, mirror: string, patterns: string[], exclude: string[], io: CliIo): Promise<number> {
  const { names } = await resolveStartTopics(admin, mirror, patterns, exclude);
  if (names.length === 0) {
    io.out('No source topic matches; the start would only save the patterns for discovery.');
    io.out('Dry run: nothing was changed.');
    return Exit.OK;
  }
  const destination = new KafkaClient(clientOptionsFromConfig(clientCfg, 'fjord-mirror-dry-run'));
  const source = new KafkaClient(await sourceClientOptions(admin, mirror, 'fjord-mirror-dry-run'));
  try {
    return await startDryRun({ admin, destination, source }, mirror, names, io);
  } finally {
    destination.close();
    source.close();
  }
}

/** The row of a bound topic none of whose partitions was reported: partition -1, state UNKNOWN. */
function unreportedTopic(topic: string, desiredState: string | null): PartitionMirrorDescription {
  return { topic, partition: -1, sourceOffset: -1, destinationOffset: -1, lag: -1, state: 'UNKNOWN', retryAttempt: 0, errorMessage: null, mirroredMaxTimestamp: -1, sourceMaxTimestamp: -1, timeLagMs: -1, lastFetchTimestamp: -1, linkError: null, desiredState };
}
