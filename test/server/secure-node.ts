/** An in-process Fjord node with the given config, on loopback ports, with its log lines kept. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerConfig } from '../../src/broker/config.js';
import { BrokerNode } from '../../src/broker/node.js';
import { createLogger } from '../../src/common/logger.js';

export interface SecureNode {
  readonly node: BrokerNode;
  /** The bound port of each listener, by name. */
  port(listener: string): number;
  logs(): string[];
  close(): Promise<void>;
}

export async function startSecureNode(config: Record<string, string>): Promise<SecureNode> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fjord-secure-'));
  const lines: string[] = [];
  const log = createLogger({}, 'info', (l) => lines.push(l));
  const node = await BrokerNode.start(
    new BrokerConfig(Object.entries({ 'node.id': '1', 'log.dirs': dataDir, 'group.initial.rebalance.delay.ms': '0', ...config })),
    log,
  );
  const started = lines.find((l) => l.includes('"msg":"node started"')) ?? '';
  const listeners = String((JSON.parse(started) as { listeners?: string }).listeners ?? '');
  const ports = new Map<string, number>();
  for (const m of listeners.matchAll(/([A-Z0-9_]+):\/\/[^:]+:(\d+)/g)) ports.set(m[1]!, Number(m[2]));
  return {
    node,
    port(listener) {
      const p = ports.get(listener);
      if (p === undefined) throw new Error(`no listener ${listener} in ${listeners}`);
      return p;
    },
    logs: () => lines,
    async close() {
      await node.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
