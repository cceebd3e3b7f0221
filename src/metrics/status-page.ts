/**
 * The status page: server-rendered HTML, read-only. `renderStatusPage` is the whole document;
 * `renderStatusBody` the part that changes, which the page's small script fetches again every
 * few seconds from `/status/body` and swaps in, so there is one renderer and no framework. Every
 * value is escaped. Rows carry data-* attributes so tools (and the browser test) can read them.
 */
import type { ClusterStatus, GroupStatus, MirrorStatus } from './cluster-reads.js';
import { MIRROR_STATES } from './mirror-metrics.js';

export interface StatusSnapshot {
  readonly nodeId: number;
  readonly advertised: string;
  readonly generatedAt: number;
  readonly cluster: ClusterStatus;
  readonly groups: readonly GroupStatus[];
  readonly mirrors: readonly (MirrorStatus & { readonly lagSeconds: ReadonlyMap<string, number | null> })[];
}

const REFRESH_MS = 3000;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
function esc(v: string | number | null): string {
  return String(v ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function seconds(v: number | null | undefined): string {
  if (v === null || v === undefined) return '–';
  return v < 10 ? v.toFixed(1) : String(Math.round(v));
}

function table(head: readonly string[], rows: readonly string[], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${esc(empty)}</p>`;
  return `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function brokers(s: StatusSnapshot): string {
  const rows = s.cluster.brokers.map(
    (b) => `<tr data-broker="${b.nodeId}"><td>${b.nodeId}</td><td>${esc(b.host)}:${b.port}</td><td>${esc(b.rack ?? '')}</td><td>${b.nodeId === s.cluster.controllerId ? 'controller' : ''}${b.nodeId === s.nodeId ? ' (this node)' : ''}</td></tr>`,
  );
  return `<section id="brokers"><h2>Brokers</h2>${table(['Node', 'Address', 'Rack', 'Role'], rows, 'No brokers.')}</section>`;
}

function topics(s: StatusSnapshot): string {
  const rows: string[] = [];
  for (const t of s.cluster.topics) {
    if (t.internal) continue;
    for (const p of t.partitions) {
      const under = p.isr.length < p.replicas.length;
      rows.push(
        `<tr data-topic="${esc(t.name)}" data-partition="${p.partition}"${under ? ' class="warn"' : ''}><td>${esc(t.name)}</td><td>${p.partition}</td><td class="leader">${p.leader}</td><td>${p.leaderEpoch}</td><td>${p.replicas.join(',')}</td><td>${p.isr.join(',')}</td></tr>`,
      );
    }
  }
  return `<section id="topics"><h2>Topics</h2>${table(['Topic', 'Partition', 'Leader', 'Leader epoch', 'Replicas', 'ISR'], rows, 'No topics.')}</section>`;
}

function groups(s: StatusSnapshot): string {
  const rows: string[] = [];
  for (const g of s.groups) {
    const total = g.partitions.reduce((n, p) => n + Math.max(0, p.lag), 0);
    rows.push(`<tr class="group" data-group="${esc(g.groupId)}"><td>${esc(g.groupId)}</td><td>${esc(g.state)}</td><td>${esc(g.type)}</td><td></td><td class="num lag">${total}</td></tr>`);
    for (const p of g.partitions) {
      rows.push(
        `<tr class="sub" data-group="${esc(g.groupId)}" data-topic="${esc(p.topic)}" data-partition="${p.partition}"><td></td><td colspan="2">${esc(p.topic)}-${p.partition}</td><td class="num">${p.committedOffset} / ${p.endOffset}</td><td class="num lag">${p.lag}</td></tr>`,
      );
    }
  }
  return `<section id="groups"><h2>Consumer groups</h2>${table(['Group', 'State', 'Type', 'Committed / end', 'Lag'], rows, 'No consumer groups.')}</section>`;
}

function mirrors(s: StatusSnapshot): string {
  if (s.mirrors.length === 0) return `<section id="mirrors"><h2>Cluster mirrors</h2><p class="empty">No cluster mirrors.</p></section>`;
  const parts = s.mirrors.map((m) => {
    const counts = new Map<string, number>();
    for (const p of m.partitions) counts.set(p.state, (counts.get(p.state) ?? 0) + 1);
    const badges = MIRROR_STATES.filter((st) => (counts.get(st) ?? 0) > 0)
      .map((st) => `<span class="badge state-${st}" data-state="${st}">${st} <b class="count">${counts.get(st)}</b></span>`)
      .join(' ');
    const rows = m.partitions.map((p) => {
      const secs = m.lagSeconds.get(`${p.topic}-${p.partition}`);
      const error = p.errorMessage !== null ? `${esc(p.errorMessage)}${p.state === 'FAILED' ? ` (retry ${p.retryAttempt})` : ''}` : '';
      return (
        `<tr data-mirror="${esc(m.name)}" data-topic="${esc(p.topic)}" data-partition="${p.partition}" class="state-${esc(p.state)}">` +
        `<td>${esc(p.topic)}</td><td>${p.partition}</td><td class="state">${esc(p.state)}</td><td class="num">${p.sourceOffset}</td><td class="num">${p.destinationOffset}</td>` +
        `<td class="num lag-records">${p.lag}</td><td class="num lag-seconds">${seconds(secs)}</td><td class="error">${error}</td></tr>`
      );
    });
    return (
      `<article class="mirror" data-mirror="${esc(m.name)}"><h3>${esc(m.name)}</h3>` +
      `<p>Source <code class="source">${esc(m.sourceBootstrap)}</code> cluster <code>${esc(m.sourceClusterId)}</code></p>` +
      `<p class="states">${badges || '<span class="empty">no partitions led here</span>'}</p>` +
      table(['Topic', 'Partition', 'State', 'Source offset', 'Destination offset', 'Lag (records)', 'Lag (s)', 'Error'], rows, 'No partitions led here.') +
      `</article>`
    );
  });
  return `<section id="mirrors"><h2>Cluster mirrors</h2>${parts.join('')}</section>`;
}

export function renderStatusBody(s: StatusSnapshot): string {
  const when = new Date(s.generatedAt).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  return (
    `<header><h1>Fjord node ${s.nodeId}</h1><p>cluster <code>${esc(s.cluster.clusterId)}</code> · ${esc(s.advertised)} · <span id="generated" data-generated="${s.generatedAt}">${when}</span></p></header>` +
    mirrors(s) +
    brokers(s) +
    topics(s) +
    groups(s)
  );
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1c2430}
main{max-width:1100px;margin:0 auto;padding:16px 24px}h1{font-size:22px;margin:8px 0 0}h2{font-size:17px;margin:24px 0 8px}
h3{font-size:15px;margin:12px 0 4px}header p{margin:4px 0;color:#556}section,article{background:#fff;border-radius:6px}
section{padding:4px 16px 12px;margin-top:16px;box-shadow:0 1px 2px #0002}table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #e4e7eb}th{font-weight:600;color:#445;background:#fafbfc}
td.num{text-align:right;font-variant-numeric:tabular-nums}tr.sub td{color:#556}tr.warn td,tr.state-FAILED td{background:#fdecea}
.badge{display:inline-block;padding:2px 8px;border-radius:10px;background:#e4e7eb;margin-right:4px}
.state-MIRRORING.badge{background:#d9f2e3}.state-FAILED.badge{background:#f8c9c4}.state-PAUSED.badge{background:#fff0c2}
.state-STOPPED.badge{background:#dbe6ff}td.error{color:#a12}code{background:#eef0f3;padding:0 4px;border-radius:3px}.empty{color:#889}`;

/** The whole document; the script re-fetches the body every REFRESH_MS and keeps the last one on errors. */
export function renderStatusPage(s: StatusSnapshot): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Fjord node ${s.nodeId}</title><style>${STYLE}</style></head><body><main id="status">${renderStatusBody(s)}</main>
<script>
(function(){var main=document.getElementById('status');
function tick(){fetch('status/body',{cache:'no-store'}).then(function(r){if(!r.ok)throw new Error(r.status);return r.text();})
.then(function(html){main.innerHTML=html;}).catch(function(){}).finally(function(){setTimeout(tick,${REFRESH_MS});});}
setTimeout(tick,${REFRESH_MS});})();
</script></body></html>`;
}
