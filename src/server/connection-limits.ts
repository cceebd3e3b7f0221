/**
 * Connection limits as Kafka's ConnectionQuotas applies them, read on every new connection so a
 * dynamic change (AlterConfigs on the broker) applies to the next one:
 *
 * - `max.connections.per.ip`, with `max.connections.per.ip.overrides` (`host:count,...`) for
 *   named addresses, counted over all listeners;
 * - `max.connections` for the node and `listener.name.<listener>.max.connections` per listener.
 *   As in Kafka, the inter-broker listener is not refused for the node-wide limit when the node
 *   has other listeners, so brokers can still reach each other.
 *
 * A connection over a limit is closed as soon as it is accepted (Kafka closes a connection over
 * the per-address limit; where Kafka's acceptor would wait for a free slot under the node-wide
 * limit, Fjord closes too, and the client retries with its reconnect backoff).
 *
 * Concurrency contract: used from the node's one event loop only.
 */
import type { Logger } from '../common/logger.js';

const UNLIMITED = 2147483647;

export type ConfigGetter = (key: string) => string | undefined;

function limitOf(v: string | undefined): number {
  if (v === undefined || v.trim() === '') return UNLIMITED;
  const n = Number(v);
  return Number.isInteger(n) && n >= 0 ? n : UNLIMITED;
}

/** `max.connections.per.ip.overrides` as address → limit; malformed entries are skipped with a warning. */
function parsePerIpOverrides(value: string | undefined, log?: Logger): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of (value ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const i = part.lastIndexOf(':');
    const n = i > 0 ? Number(part.slice(i + 1)) : Number.NaN;
    if (!Number.isInteger(n) || n < 0) {
      log?.warn('ignoring malformed max.connections.per.ip.overrides entry', { entry: part });
      continue;
    }
    out.set(part.slice(0, i).replace(/^\[|\]$/g, ''), n);
  }
  return out;
}

/** Loopback and IPv4-mapped forms of one address compare equal. */
function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

export class ConnectionLimits {
  private readonly perIp = new Map<string, number>();
  private readonly perListener = new Map<string, number>();
  private total = 0;
  private overridesText: string | undefined;
  private overrides = new Map<string, number>();

  constructor(
    private readonly get: ConfigGetter,
    private readonly interBrokerListener: string,
    private readonly listenerCount: number,
    private readonly log: Logger,
  ) {}

  /** Counts a new connection, or returns why it is refused (nothing counted). */
  tryAcquire(listener: string, remoteAddress: string): string | null {
    const ip = normalizeAddress(remoteAddress);
    const ipCount = this.perIp.get(ip) ?? 0;
    const ipLimit = this.ipLimit(ip);
    if (ipCount >= ipLimit) return `Too many connections from ${ip} (maximum = ${ipLimit})`;
    const listenerCount = this.perListener.get(listener) ?? 0;
    const listenerLimit = limitOf(this.get(`listener.name.${listener.toLowerCase()}.max.connections`));
    if (listenerCount >= listenerLimit) return `Listener ${listener} has ${listenerCount} connections (maximum = ${listenerLimit})`;
    const protectedListener = listener === this.interBrokerListener && this.listenerCount > 1;
    const brokerLimit = limitOf(this.get('max.connections'));
    if (!protectedListener && this.total >= brokerLimit) return `The node has ${this.total} connections (max.connections = ${brokerLimit})`;
    this.perIp.set(ip, ipCount + 1);
    this.perListener.set(listener, listenerCount + 1);
    this.total++;
    return null;
  }

  release(listener: string, remoteAddress: string): void {
    const ip = normalizeAddress(remoteAddress);
    const n = (this.perIp.get(ip) ?? 0) - 1;
    if (n > 0) this.perIp.set(ip, n);
    else this.perIp.delete(ip);
    this.perListener.set(listener, Math.max(0, (this.perListener.get(listener) ?? 0) - 1));
    this.total = Math.max(0, this.total - 1);
  }

  private ipLimit(ip: string): number {
    const text = this.get('max.connections.per.ip.overrides');
    if (text !== this.overridesText) {
      this.overridesText = text;
      this.overrides = parsePerIpOverrides(text, this.log);
    }
    return this.overrides.get(ip) ?? limitOf(this.get('max.connections.per.ip'));
  }
}
