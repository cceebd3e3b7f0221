/**
 * The deployment examples say what docs/deploy.md says they do. The podman of the test machines
 * plays no StatefulSet, so this checks the manifests and the Compose file as documents: stable node
 * ids from the pod ordinal, one volume per node, the image's health check as readiness, a
 * disruption budget of one, and listeners every client can reach.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from '../helpers/node.js';

interface Doc {
  kind: string;
  metadata: { name: string };
  spec: Record<string, unknown>;
}

const docs = (file: string): Doc[] => parseAllDocuments(readFileSync(resolve(ROOT, file), 'utf8')).map((d) => d.toJS() as Doc);
const one = (all: Doc[], kind: string, name: string): Doc => {
  const found = all.find((d) => d.kind === kind && d.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};

interface Container {
  image: string;
  env: { name: string; value?: string; valueFrom?: { fieldRef: { fieldPath: string } } }[];
  readinessProbe: { exec: { command: string[] } };
  volumeMounts: { name: string; mountPath: string }[];
}

const HEALTH_CHECK = /HEALTHCHECK[^\n]*\n\s*CMD (\[.*\])/;

describe('the Kubernetes manifests', () => {
  const fjord = docs('deploy/kubernetes/fjord.yaml');
  const sts = one(fjord, 'StatefulSet', 'fjord').spec as {
    replicas: number;
    serviceName: string;
    template: { spec: { containers: Container[]; terminationGracePeriodSeconds: number } };
    volumeClaimTemplates: { metadata: { name: string } }[];
  };
  const c = sts.template.spec.containers[0]!;
  const env = new Map(c.env.map((e) => [e.name, e]));

  it('runs three nodes whose node id is the pod ordinal, each on its own claim', () => {
    expect(sts.replicas).toBe(3);
    expect(env.get('KAFKA_NODE_ID')!.valueFrom!.fieldRef.fieldPath).toBe("metadata.labels['apps.kubernetes.io/pod-index']");
    expect(sts.volumeClaimTemplates.map((v) => v.metadata.name)).toEqual(['data']);
    expect(c.volumeMounts).toContainEqual({ name: 'data', mountPath: '/var/lib/fjord' });
    expect(sts.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30);
  });

  it("advertises each pod's name in the headless Service, and points at the etcd members", () => {
    expect(one(fjord, 'Service', sts.serviceName).spec.clusterIP).toBe('None');
    expect(env.get('KAFKA_ADVERTISED_LISTENERS')!.value).toBe(`PLAINTEXT://$(POD_NAME).${sts.serviceName}.$(POD_NAMESPACE).svc:9092`);
    const etcd = docs('deploy/kubernetes/etcd.yaml');
    const etcdSts = one(etcd, 'StatefulSet', 'fjord-etcd').spec as { replicas: number; serviceName: string };
    const endpoints = Array.from({ length: etcdSts.replicas }, (_, i) => `http://fjord-etcd-${i}.${etcdSts.serviceName}:2379`).join(',');
    expect(env.get('KAFKA_METADATA_ETCD_ENDPOINTS')!.value).toBe(endpoints);
  });

  it("is ready when the image's health check passes, and is disrupted one pod at a time", () => {
    const containerfile = readFileSync(resolve(ROOT, 'Containerfile'), 'utf8');
    expect(c.readinessProbe.exec.command).toEqual(JSON.parse(HEALTH_CHECK.exec(containerfile)![1]!));
    expect(one(fjord, 'PodDisruptionBudget', 'fjord').spec.maxUnavailable).toBe(1);
  });
});

describe('the Compose file', () => {
  // Compose reads YAML merge keys (`<<: *fjord`).
  const compose = parse(readFileSync(resolve(ROOT, 'deploy/compose/compose.yaml'), 'utf8'), { merge: true }) as {
    services: Record<string, { environment: Record<string, string>; volumes?: string[]; ports?: string[] }>;
  };

  it('runs etcd and three nodes with their own ids, volumes and reachable listeners', () => {
    const nodes = ['fjord-1', 'fjord-2', 'fjord-3'].map((n) => [n, compose.services[n]!] as const);
    expect(Object.keys(compose.services).sort()).toEqual(['etcd', 'fjord-1', 'fjord-2', 'fjord-3']);
    for (const [i, [name, s]] of nodes.entries()) {
      const e = s.environment;
      expect(e.KAFKA_NODE_ID).toBe(String(i + 1));
      expect(e.KAFKA_METADATA_ETCD_ENDPOINTS).toBe('http://etcd:2379');
      expect(s.volumes).toEqual([`${name}-data:/var/lib/fjord`]);
      const external = /EXTERNAL:\/\/localhost:(\d+)/.exec(e.KAFKA_ADVERTISED_LISTENERS!)![1]!;
      expect(e.KAFKA_ADVERTISED_LISTENERS).toContain(`INTERNAL://${name}:9092`);
      expect(e.KAFKA_LISTENERS).toContain(`EXTERNAL://0.0.0.0:${external}`);
      expect(s.ports).toContain(`${external}:${external}`);
      // The health check asks the first listener: the plaintext one inside the network.
      expect(e.KAFKA_LISTENERS!.startsWith('INTERNAL://0.0.0.0:9092')).toBe(true);
    }
  });
});
