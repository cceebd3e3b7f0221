/**
 * Connection limits against a real node process: `max.connections.per.ip` closes the connection
 * over the limit at once, `max.connections.per.ip.overrides` lets a named address open more, a
 * closed connection frees its slot, and a kafkajs client over the limit fails to connect while
 * one under it works; `listener.name.<l>.max.connections` and `max.connections` close the
 * connection over them except on the inter-broker listener. Per-listener keys (`listener.name.<l>.max.connections`) are understood,
 * not warned about as unknown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { startNode, type RunningNode } from '../helpers/node.js';
import { startSecureNode, type SecureNode } from './secure-node.js';

let node: RunningNode;
const open: Socket[] = [];

/** An ApiVersions v0 request: a served connection answers it, a refused one is closed. */
function apiVersionsFrame(correlationId: number): Buffer {
  const clientId = Buffer.from('limits');
  const b = Buffer.alloc(4 + 2 + 2 + 4 + 2 + clientId.length);
  b.writeInt32BE(b.length - 4, 0);
  b.writeInt16BE(18, 4);
  b.writeInt16BE(0, 6);
  b.writeInt32BE(correlationId, 8);
  b.writeInt16BE(clientId.length, 12);
  clientId.copy(b, 14);
  return b;
}

/** Opens a connection from `localAddress` and says whether the node answered ('served') or closed it. */
function probe(localAddress: string, port = node.port): Promise<{ outcome: 'served' | 'closed'; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    open.push(socket);
    const timer = setTimeout(() => reject(new Error('neither answered nor closed in 10 s')), 10_000);
    socket.once('connect', () => socket.write(apiVersionsFrame(1)));
    socket.once('data', () => {
      clearTimeout(timer);
      resolve({ outcome: 'served', socket });
    });
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ outcome: 'closed', socket });
    });
    socket.on('error', () => {});
  });
}

beforeAll(async () => {
  node = await startNode({
    overrides: {
      'max.connections.per.ip': 2,
      'max.connections.per.ip.overrides': '127.0.0.2:4',
      'listener.name.plaintext.max.connections': 100,
    },
  });
}, 300_000);

afterAll(async () => {
  for (const s of open) s.destroy();
  await node?.destroy();
});

describe('connection limits', () => {
  it('understands listener.name.<listener>. keys instead of warning about them', () => {
    expect(node.logs()).not.toContain("unknown configuration key 'listener.name.plaintext.max.connections'");
  });

  it('closes the connection over max.connections.per.ip and frees the slot when one closes', async () => {
    const a = await probe('127.0.0.1');
    const b = await probe('127.0.0.1');
    expect([a.outcome, b.outcome]).toEqual(['served', 'served']);
    expect((await probe('127.0.0.1')).outcome).toBe('closed');
    // A real client over the limit cannot connect at all.
    const kafka = new Kafka({ clientId: 'over-limit', brokers: [node.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 3000 });
    const admin = kafka.admin();
    await expect(admin.connect().then(() => admin.listTopics())).rejects.toThrow();
    await admin.disconnect();
    a.socket.destroy();
    await new Promise((r) => a.socket.once('close', r));
    const deadline = Date.now() + 10_000;
    let again = await probe('127.0.0.1');
    while (again.outcome === 'closed' && Date.now() < deadline) again = await probe('127.0.0.1');
    expect(again.outcome).toBe('served');
    b.socket.destroy();
    again.socket.destroy();
  }, 60_000);

  it('lets an address named in max.connections.per.ip.overrides open its own limit', async () => {
    const served = [];
    for (let i = 0; i < 4; i++) served.push((await probe('127.0.0.2')).outcome);
    expect(served).toEqual(['served', 'served', 'served', 'served']);
    expect((await probe('127.0.0.2')).outcome).toBe('closed');
  }, 60_000);
});

describe('listener and node connection limits', () => {
  let multi: SecureNode;

  beforeAll(async () => {
    multi = await startSecureNode({
      listeners: 'PLAINTEXT://127.0.0.1:0,OTHER://127.0.0.1:0,THIRD://127.0.0.1:0',
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,OTHER:PLAINTEXT,THIRD:PLAINTEXT',
      'inter.broker.listener.name': 'PLAINTEXT',
      'max.connections': '3',
      'listener.name.other.max.connections': '1',
    });
  }, 60_000);

  afterAll(async () => {
    await multi?.close();
  });

  it('closes connections over a listener limit and over max.connections, but not on the inter-broker listener', async () => {
    const outcome = async (listener: string): Promise<string> => (await probe('127.0.0.3', multi.port(listener))).outcome;
    expect(await outcome('OTHER')).toBe('served');
    expect(await outcome('OTHER')).toBe('closed');
    expect(await outcome('THIRD')).toBe('served');
    expect(await outcome('THIRD')).toBe('served');
    // Three connections are open: max.connections is reached.
    expect(await outcome('THIRD')).toBe('closed');
    expect(await outcome('PLAINTEXT')).toBe('served');
  });
});
