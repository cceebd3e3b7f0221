/**
 * The Kafka client over real loopback sockets: typed calls against a broker listener (the
 * project's own server with the mirroring handlers, ApiVersions and Metadata), version
 * negotiation (UNSUPPORTED_VERSION, the DescribeCluster fallback to Metadata), the authenticate
 * hook's place after ApiVersions, and the failures a user sees as Kafka error codes: a refused
 * connection (NETWORK_EXCEPTION) and a broker that never answers (REQUEST_TIMED_OUT).
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Apis, type ApiSpec } from '../../src/client/apis.js';
import { KafkaClient } from '../../src/client/kafka-client.js';
import { KafkaConnection } from '../../src/client/kafka-connection.js';
import { ErrorCode } from '../../src/protocol/generated/errors.js';
import { encodeMetadataRequest, type MetadataRequestInput } from '../../src/protocol/generated/messages/metadata-request.js';
import { decodeMetadataResponse, type MetadataResponse } from '../../src/protocol/generated/messages/metadata-response.js';
import { KafkaError } from '../../src/protocol/kafka-error.js';
import { startMirrorTestServer, type MirrorTestServer } from '../admin/helpers/mirror-test-server.js';
import { waitFor } from '../helpers/wait.js';

let broker: MirrorTestServer;

beforeAll(async () => {
  broker = await startMirrorTestServer();
});

afterAll(async () => {
  await broker?.close();
});

function port(bootstrap: string): number {
  return Number(bootstrap.slice(bootstrap.lastIndexOf(':') + 1));
}

describe('KafkaClient', () => {
  it('sends typed calls at a version both sides speak and learns the brokers', async () => {
    const client = new KafkaClient({ bootstrapServers: [broker.bootstrap], clientId: 'client-test' });
    try {
      const md = await client.metadata(null);
      expect(md.clusterId).toBe(broker.host.clusterId);
      expect(client.clusterId).toBe(broker.host.clusterId);
      expect(client.knownBrokers()).toEqual([{ nodeId: 1, host: '127.0.0.1', port: port(broker.bootstrap) }]);
      // Addressed to broker 1 by id, over the connection the Metadata answer made known.
      const listed = await client.send(Apis.ListClusterMirrors, { includeTopicNames: true }, 1);
      expect(listed).toMatchObject({ errorCode: ErrorCode.NONE, mirrors: [] });
    } finally {
      client.close();
    }
  });

  it('answers UNSUPPORTED_VERSION when the broker speaks no version of the call, and falls back for DescribeCluster', async () => {
    const client = new KafkaClient({ bootstrapServers: [broker.bootstrap] });
    const metadataV0: ApiSpec<MetadataRequestInput, MetadataResponse> = { ...Apis.Metadata, versions: [0, 0] };
    try {
      await expect(client.send(metadataV0, { topics: null })).rejects.toMatchObject({ code: ErrorCode.UNSUPPORTED_VERSION });
      expect(await client.sendIfSupported(Apis.DescribeAcls, { resourceTypeFilter: 1, patternTypeFilter: 1, operation: 1, permissionType: 1 })).toBeNull();
      // This listener has no DescribeCluster: the cluster id comes from Metadata instead.
      expect(await client.describeCluster()).toMatchObject({ errorCode: ErrorCode.NONE, clusterId: broker.host.clusterId, controllerId: 1 });
    } finally {
      client.close();
    }
  });

  it('runs the authenticate hook after ApiVersions, before any call, and fails the connect with its error', async () => {
    const seen: number[] = [];
    const ok = await KafkaConnection.connect({
      host: '127.0.0.1',
      port: port(broker.bootstrap),
      clientId: 'auth-test',
      authenticate: async (conn) => {
        seen.push(conn.versions.size);
      },
    });
    ok.close();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeGreaterThan(0);
    const client = new KafkaClient({
      bootstrapServers: [broker.bootstrap],
      authenticate: () => Promise.reject(new KafkaError(ErrorCode.SASL_AUTHENTICATION_FAILED, 'bad credentials')),
    });
    try {
      const err = await client.metadata([]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KafkaError);
      expect((err as KafkaError).code).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
      expect((err as KafkaError).message).toBe('bad credentials');
    } finally {
      client.close();
    }
  });

  it('a refused connection is NETWORK_EXCEPTION', async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const free = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const client = new KafkaClient({ bootstrapServers: [`127.0.0.1:${free}`], connectTimeoutMs: 2000 });
    try {
      await expect(client.metadata([])).rejects.toMatchObject({ code: ErrorCode.NETWORK_EXCEPTION });
    } finally {
      client.close();
    }
  });

  it('a broker that never answers fails the request with REQUEST_TIMED_OUT; a live one answers the raw path', async () => {
    const silent = net.createServer((s) => s.on('data', () => undefined));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const at = (silent.address() as net.AddressInfo).port;
    try {
      const err = await KafkaConnection.connect({ host: '127.0.0.1', port: at, clientId: 'timeout-test', requestTimeoutMs: 300 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KafkaError);
      expect((err as KafkaError).code).toBe(ErrorCode.REQUEST_TIMED_OUT);
      expect((err as KafkaError).message).toMatch(/ApiVersions v3 timed out after 300 ms/);
      // The raw connection path for callers with their own request: the same typed decoders.
      const live = await KafkaConnection.connect({ host: '127.0.0.1', port: port(broker.bootstrap), clientId: 'raw' });
      try {
        const md = await live.request(3, 12, (w) => encodeMetadataRequest(w, { topics: [] }, 12), (r) => decodeMetadataResponse(r, 12));
        expect(md.brokers.map((b) => b.nodeId)).toEqual([1]);
      } finally {
        live.close();
      }
    } finally {
      silent.close();
    }
  });

  it('opens no connection once closed: a call still waiting for a failed connect rejects with "client closed"', async () => {
    // A broker whose first connection takes the ApiVersions request and never answers; the test
    // then drops it. Every later connection is counted and dropped at once.
    const sockets: net.Socket[] = [];
    let asked = false;
    const server = net.createServer((s) => {
      sockets.push(s);
      if (sockets.length === 1) s.once('data', () => (asked = true));
      else s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const at = (server.address() as net.AddressInfo).port;
    const client = new KafkaClient({ bootstrapServers: [`127.0.0.1:${at}`], clientId: 'closing' });
    try {
      const first = client.metadata([]).catch((e: unknown) => e);
      await waitFor('the first connection asked ApiVersions', () => asked);
      // A second call waits on the same connect; the client is closed meanwhile (a mirror being
      // torn down while its source restarts), then the connect fails.
      const second = client.metadata([]).catch((e: unknown) => e);
      client.close();
      sockets[0]!.destroy();
      expect(await first).toMatchObject({ code: ErrorCode.NETWORK_EXCEPTION });
      const err = await second;
      expect(err).toMatchObject({ code: ErrorCode.NETWORK_EXCEPTION });
      expect((err as KafkaError).message).toMatch(/client closed/);
      // No socket was opened after close: one left open keeps the process from exiting.
      expect(sockets).toHaveLength(1);
    } finally {
      client.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('callers that find the bootstrap connection dead at once share one new connection, and close leaves none open', async () => {
    // The first connection takes the ApiVersions request and is then dropped; later ones are
    // passed to the real listener. The server side counts the sockets still open.
    const open = new Set<net.Socket>();
    let accepted = 0;
    let asked = false;
    let firstSocket: net.Socket | null = null;
    const server = net.createServer((s) => {
      accepted++;
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => undefined);
      if (accepted === 1) {
        firstSocket = s;
        s.once('data', () => (asked = true));
        return;
      }
      const up = net.connect(port(broker.bootstrap), '127.0.0.1');
      up.on('error', () => s.destroy());
      s.on('close', () => up.destroy());
      up.on('close', () => s.destroy());
      s.pipe(up).pipe(s);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const at = (server.address() as net.AddressInfo).port;
    const client = new KafkaClient({ bootstrapServers: [`127.0.0.1:${at}`], clientId: 'sharing' });
    try {
      const first = client.metadata([]).catch((e: unknown) => e);
      await waitFor('the first connection asked ApiVersions', () => asked);
      // Two more calls wait on that connect (a fetcher's metadata refresh and a config sync, say).
      const calls = [client.metadata([]), client.metadata([])];
      firstSocket!.destroy();
      expect(await first).toMatchObject({ code: ErrorCode.NETWORK_EXCEPTION });
      for (const md of await Promise.all(calls)) expect(md.clusterId).toBe(broker.host.clusterId);
      // Both went over one new connection.
      expect(accepted).toBe(2);
      client.close();
      await waitFor('every socket closed after close', () => open.size === 0, 5_000);
    } finally {
      client.close();
      for (const s of open) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

