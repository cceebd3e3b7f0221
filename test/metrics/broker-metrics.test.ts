/**
 * Broker metrics an operator graphs, on a real node process scraped over HTTP after real client
 * requests: Kafka's request time split per API (a long-poll fetch spends its MaxWaitMs in remote
 * time; requests that never wait spend none), the authentication counters per listener (a wrong
 * password is one failed authentication, a right one a successful one), the partition health
 * gauges read from the metadata image, and the status page asking a browser for a SASL user's
 * login (PLAIN from JAAS, SCRAM from the stored credentials) while /metrics stays open.
 */
import { Kafka, logLevel } from 'kafkajs';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startNode, type RunningNode } from '../helpers/node.js';
import { addScramUser } from '../auth/sasl-helpers.js';
import { pick, scrape, total, type Sample } from './scrape.js';
import { waitFor } from '../helpers/wait.js';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";';

let node: RunningNode;
let metrics: number;
let saslPort: number;

beforeAll(async () => {
  const [port, sasl] = [await freePort(), await freePort()];
  saslPort = sasl;
  metrics = await freePort();
  node = await startNode({
    port,
    overrides: {
      listeners: `PLAINTEXT://127.0.0.1:${port},SASL_PLAINTEXT://127.0.0.1:${sasl}`,
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT',
      'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-512',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
      'connection.failed.authentication.delay.ms': 0,
      'metrics.listener': `http://127.0.0.1:${metrics}`,
    },
  });
}, 60_000);

afterAll(async () => {
  await node?.destroy();
});

function kafka(port: number, sasl?: { username: string; password: string }): Kafka {
  return new Kafka({
    clientId: 'broker-metrics-test',
    brokers: [`127.0.0.1:${port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
    ...(sasl ? { sasl: { mechanism: 'plain' as const, ...sasl } } : {}),
  });
}

/** Observations of a histogram at or below `le` milliseconds. */
function bucket(s: readonly Sample[], name: string, request: string, le: string): number {
  return total(s, `${name}_bucket`, { request, le });
}

describe('request time split per API', () => {
  it('puts a long-poll fetch’s wait in remote time, and none for requests that never wait', async () => {
    const client = kafka(node.port);
    const admin = client.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'idle', numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
    const producer = client.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({ topic: 'idle', acks: -1, messages: [{ value: 'one' }] });
    await producer.disconnect();

    const consumer = client.consumer({ groupId: 'long-poll', maxWaitTimeInMs: 500 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'idle', fromBeginning: true });
    await consumer.run({ eachMessage: async () => {} });
    let s: Sample[] = [];
    try {
      // Once the record is read the topic is idle: every fetch waits its 500 ms remotely.
      await waitFor('two long polls', async () => {
        s = await scrape(metrics);
        return total(s, 'kafka_network_requestmetrics_remotetimems_count', { request: 'Fetch' }) - bucket(s, 'kafka_network_requestmetrics_remotetimems', 'Fetch', '250') >= 2;
      });
    } finally {
      await consumer.disconnect();
    }
    const fetches = total(s, 'kafka_network_requestmetrics_totaltimems_count', { request: 'Fetch' });
    // The wait is remote, not local: local work of the same fetches stays short.
    const longPolls = fetches - bucket(s, 'kafka_network_requestmetrics_remotetimems', 'Fetch', '250');
    expect(longPolls).toBeGreaterThanOrEqual(2);
    expect(fetches - bucket(s, 'kafka_network_requestmetrics_localtimems', 'Fetch', '250')).toBeLessThan(longPolls);
    // A long poll lasts at least its MaxWaitMs (bucketed: 500 is the bucket below 1000).
    expect(fetches - bucket(s, 'kafka_network_requestmetrics_totaltimems', 'Fetch', '250')).toBeGreaterThanOrEqual(longPolls);
    expect(total(s, 'kafka_network_requestmetrics_remotetimems_sum', { request: 'Fetch' })).toBeGreaterThanOrEqual(longPolls * 450);

    // As in Kafka, a consumer's fetch is also counted as FetchConsumer; no follower fetched.
    expect(total(s, 'kafka_network_requestmetrics_totaltimems_count', { request: 'FetchConsumer' })).toBe(fetches);
    expect(total(s, 'kafka_network_requestmetrics_remotetimems_sum', { request: 'FetchConsumer' })).toBe(total(s, 'kafka_network_requestmetrics_remotetimems_sum', { request: 'Fetch' }));
    expect(pick(s, 'kafka_network_requestmetrics_requests_total', { request: 'FetchFollower' })).toEqual([]);

    // Metadata never waits remotely.
    expect(total(s, 'kafka_network_requestmetrics_remotetimems_count', { request: 'Metadata' })).toBeGreaterThan(0);
    expect(total(s, 'kafka_network_requestmetrics_remotetimems_sum', { request: 'Metadata' })).toBe(0);

    // Every part is measured once per request, and the request counter agrees.
    for (const request of ['Produce', 'Fetch', 'Metadata', 'ApiVersions']) {
      const n = total(s, 'kafka_network_requestmetrics_requests_total', { request });
      expect(n, request).toBeGreaterThan(0);
      for (const part of ['totaltimems', 'requestqueuetimems', 'localtimems', 'remotetimems', 'responsequeuetimems', 'responsesendtimems']) {
        expect(total(s, `kafka_network_requestmetrics_${part}_count`, { request }), `${part} ${request}`).toBe(n);
      }
    }
    // The parts add up to the total.
    const sum = (part: string): number => total(s, `kafka_network_requestmetrics_${part}_sum`, { request: 'Fetch' });
    const parts = ['requestqueuetimems', 'localtimems', 'remotetimems', 'responsequeuetimems', 'responsesendtimems'].reduce((n, p) => n + sum(p), 0);
    expect(parts).toBeCloseTo(sum('totaltimems'), 0);
    expect(pick(s, 'kafka_network_socketserver_networkprocessoravgidlepercent')).toHaveLength(1);
  }, 60_000);
});

describe('authentication counters', () => {
  const failed = async (): Promise<number> => total(await scrape(metrics), 'kafka_server_socket_server_metrics_failed_authentication_total', { listener: 'SASL_PLAINTEXT' });
  const succeeded = async (): Promise<number> => total(await scrape(metrics), 'kafka_server_socket_server_metrics_successful_authentication_total', { listener: 'SASL_PLAINTEXT' });

  it('count a wrong password as one failed authentication on its listener', async () => {
    const before = await failed();
    const admin = kafka(saslPort, { username: 'alice', password: 'wrong' }).admin();
    await expect(admin.connect()).rejects.toThrow(/SASL_AUTHENTICATION_FAILED|Authentication failed/i);
    await admin.disconnect();
    expect(await failed()).toBe(before + 1);
    expect(total(await scrape(metrics), 'kafka_server_socket_server_metrics_failed_authentication_total', { listener: 'PLAINTEXT' })).toBe(0);
  });

  it('count a right password as a successful authentication', async () => {
    const [okBefore, failedBefore] = [await succeeded(), await failed()];
    const admin = kafka(saslPort, { username: 'alice', password: 'alice-secret' }).admin();
    await admin.connect();
    try {
      expect(await admin.listTopics()).toContain('idle');
    } finally {
      await admin.disconnect();
    }
    expect(await succeeded()).toBeGreaterThanOrEqual(okBefore + 1);
    expect(await failed()).toBe(failedBefore);
  });
});

describe('partition health on one node', () => {
  it('reads under-replicated, min ISR and offline counts from the metadata image', async () => {
    const admin = kafka(node.port).admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: 'strict', numPartitions: 3 }], waitForLeaders: true });
      let s = await scrape(metrics);
      const leaders = total(s, 'kafka_server_replicamanager_leadercount');
      expect(leaders).toBeGreaterThanOrEqual(4);
      expect(total(s, 'kafka_server_replicamanager_underreplicatedpartitions')).toBe(0);
      expect(total(s, 'kafka_controller_kafkacontroller_offlinepartitionscount')).toBe(0);
      // One replica and Kafka's default min.insync.replicas=1: every partition is at its min ISR.
      expect(total(s, 'kafka_server_replicamanager_atminisrpartitioncount')).toBe(leaders);
      expect(total(s, 'kafka_server_replicamanager_underminisrpartitioncount')).toBe(0);
      expect(pick(s, 'kafka_server_replicamanager_isrshrinks_total')).toEqual([expect.objectContaining({ value: 0 })]);
      expect(pick(s, 'kafka_server_replicamanager_isrexpands_total')).toEqual([expect.objectContaining({ value: 0 })]);

      // min.insync.replicas=2 on a one-replica topic: its 3 partitions are under min ISR at once.
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: 'strict', configEntries: [{ name: 'min.insync.replicas', value: '2' }] }] });
      s = await scrape(metrics);
      expect(total(s, 'kafka_server_replicamanager_underminisrpartitioncount')).toBe(3);
      expect(total(s, 'kafka_server_replicamanager_atminisrpartitioncount')).toBe(leaders - 3);
      expect(total(s, 'kafka_server_replicamanager_underreplicatedpartitions')).toBe(0);
    } finally {
      await admin.disconnect();
    }
  });
});

describe('the status page behind the SASL users', () => {
  it('answers 401 without a login or with a wrong one, and the page with a PLAIN or SCRAM user', async () => {
    await addScramUser(node.port, 'carol', 'carol-scram', 2);
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      const anonymous = await browser.newPage();
      // What the browser got: a Basic challenge; headless Chromium cannot prompt, so it gives up.
      const refused = await anonymous.request.get(`http://127.0.0.1:${metrics}/status`);
      expect(refused.status()).toBe(401);
      expect(refused.headers()['www-authenticate']).toBe('Basic realm="fjord", charset="UTF-8"');
      await expect(anonymous.goto(`http://127.0.0.1:${metrics}/status`)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/);
      expect((await anonymous.request.get(`http://127.0.0.1:${metrics}/status.json`)).status()).toBe(401);
      // Prometheus scrapes stay open. (A fresh page: the refused navigation above may still be
      // turning into Chromium's error page on the first one.)
      const scraper = await browser.newPage();
      expect((await scraper.goto(`http://127.0.0.1:${metrics}/metrics`))?.status()).toBe(200);

      for (const [username, password, status] of [
        ['alice', 'wrong', 401],
        ['carol', 'alice-secret', 401],
        ['alice', 'alice-secret', 200],
        ['carol', 'carol-scram', 200],
      ] as const) {
        const context = await browser.newContext({ httpCredentials: { username, password } });
        const page = await context.newPage();
        const res = await page.goto(`http://127.0.0.1:${metrics}/status`);
        expect(res?.status(), `${username}/${password}`).toBe(status);
        if (status === 200) expect(await page.$$eval('#topics tr[data-topic="strict"] .leader', (tds) => tds.map((td) => td.textContent))).toEqual(['1', '1', '1']);
        await context.close();
      }
    } finally {
      await browser.close();
    }
  }, 60_000);
});
