/**
 * A node's membership in an etcd-backed cluster: its lease, its broker registration, the view of
 * every other registration, and the controller election.
 *
 * - Lease: TTL `broker.session.timeout.ms` (rounded up to whole seconds, etcd's unit), renewed
 *   every `broker.heartbeat.interval.ms` (Kafka's BrokerLifecycleManager heartbeats). A node whose
 *   last successful renewal is older than the TTL is fenced at once, before etcd says so: it must
 *   not act as leader after its lease may be gone. A fenced node registers again with a new lease
 *   (a new broker epoch), as a Kafka broker re-registers after its session expired.
 * - Registration: `<prefix>/brokers/<node id>`, created only if absent (a second live process
 *   with the same node.id refuses to start), bound to the lease; its create revision is the
 *   broker epoch.
 * - Election: `<prefix>/controller`, created only if absent and bound to the lease; the winner
 *   is the active controller until its lease ends. Its create revision is the controller epoch,
 *   which every controller-only write compares (ControllerFence).
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Etcd3, type IKeyValue, type Lease, type Watcher } from 'etcd3';
import type { Logger } from '../../common/logger.js';
import { ConfigError } from '../../config/config-error.js';
import type { BrokerRegistration, ClusterEvent, ClusterView } from '../cluster-view.js';
import type { ControllerFence } from './etcd-metadata-log.js';

export interface EtcdQuorumOptions {
  readonly endpoints: readonly string[];
  readonly prefix: string;
  readonly self: Omit<BrokerRegistration, 'brokerEpoch' | 'incarnationId'>;
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly log: Logger;
}

export class EtcdQuorum implements ClusterView {
  readonly distributed = true;
  readonly client: Etcd3;
  readonly incarnationId = randomUUID();
  private readonly events = new EventEmitter();
  private readonly brokers = new Map<number, BrokerRegistration>();
  /** Nodes that asked to have their leaderships moved before they exit (controlled shutdown). */
  private readonly shuttingDown = new Set<number>();
  private lease: Lease | null = null;
  private leaseId = '';
  private lastRenewedAt = 0;
  private myBrokerEpoch = -1;
  private activeId = -1;
  private activeEpoch = -1;
  private isFenced = true;
  private timer: NodeJS.Timeout | null = null;
  private watchers: Watcher[] = [];
  private busy = false;
  private closed = false;

  private constructor(private readonly opts: EtcdQuorumOptions) {
    this.client = new Etcd3({ hosts: [...opts.endpoints], dialTimeout: 5000 });
  }

  static create(opts: EtcdQuorumOptions): EtcdQuorum {
    return new EtcdQuorum(opts);
  }

  get prefix(): string {
    return this.opts.prefix;
  }

  get fenced(): boolean {
    return this.isFenced;
  }

  private get ttlSeconds(): number {
    return Math.max(2, Math.ceil(this.opts.sessionTimeoutMs / 1000));
  }

  private get brokerKey(): string {
    return `${this.opts.prefix}/brokers/${this.opts.self.nodeId}`;
  }

  private get controllerKey(): string {
    return `${this.opts.prefix}/controller`;
  }

  /**
   * The cluster id: the first node writes its own into `<prefix>/cluster-id`; every later node
   * adopts what is there. Returns the id in force.
   */
  async adoptClusterId(candidate: string): Promise<string> {
    const key = `${this.opts.prefix}/cluster-id`;
    const res = await this.client.if(key, 'Create', '==', 0).then(this.client.put(key).value(candidate)).else(this.client.get(key)).commit();
    if (res.succeeded) return candidate;
    return res.responses[0]!.response_range!.kvs[0]!.value.toString();
  }

  /** Registers this node (refusing a duplicate live node.id), then follows the members and the election. */
  async start(): Promise<void> {
    // A node restarted right after a crash finds its old registration until that lease expires
    // (at most one TTL): wait that long before calling it a duplicate (Kafka's controller also
    // refuses a second incarnation until the old session times out).
    const deadline = Date.now() + this.ttlSeconds * 1000 + 1000;
    let registered = await this.register();
    while (!registered && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      registered = await this.register();
    }
    if (!registered) {
      throw new ConfigError(`node.id ${this.opts.self.nodeId} is already registered by a live node of this cluster (${this.brokerKey})`);
    }
    await this.followBrokers();
    await this.followShutdowns();
    await this.followController();
    this.timer = setInterval(() => void this.heartbeat(), this.opts.heartbeatIntervalMs);
  }

  private async register(): Promise<boolean> {
    const lease = this.client.lease(this.ttlSeconds, { autoKeepAlive: false });
    const leaseId = await lease.grant();
    const sentAt = Date.now();
    const value = JSON.stringify({ ...this.opts.self, incarnationId: this.incarnationId });
    const res = await this.client.if(this.brokerKey, 'Create', '==', 0).then(this.client.put(this.brokerKey).value(value).lease(leaseId)).commit();
    if (!res.succeeded) {
      await lease.revoke().catch(() => undefined);
      return false;
    }
    this.lease = lease;
    this.leaseId = leaseId;
    this.lastRenewedAt = sentAt;
    this.myBrokerEpoch = Number(res.header.revision);
    this.isFenced = false;
    this.opts.log.info('broker registered', { brokerEpoch: this.myBrokerEpoch, ttlSeconds: this.ttlSeconds });
    this.emit('unfenced');
    return true;
  }

  private async heartbeat(): Promise<void> {
    if (this.busy || this.closed) return;
    this.busy = true;
    try {
      if (this.isFenced) {
        if (await this.register()) await this.campaignIfVacant();
        return;
      }
      if (Date.now() - this.lastRenewedAt > this.ttlSeconds * 1000) {
        this.fence('the lease was not renewed within broker.session.timeout.ms');
        return;
      }
      const sentAt = Date.now();
      const res = await this.lease!.keepaliveOnce({ deadline: Date.now() + this.opts.heartbeatIntervalMs * 2 });
      if (Number(res.TTL) <= 0) this.fence('the lease expired');
      else this.lastRenewedAt = sentAt;
    } catch (err) {
      // etcd unreachable: keep trying until the TTL runs out (checked on the next beat).
      if (String(err).includes('requested lease not found')) this.fence('the lease expired');
      else this.opts.log.warn('lease renewal failed', { err: String(err) });
    } finally {
      this.busy = false;
    }
  }

  private fence(reason: string): void {
    if (this.isFenced) return;
    this.isFenced = true;
    this.myBrokerEpoch = -1;
    const lease = this.lease;
    this.lease = null;
    lease?.release();
    this.opts.log.warn('broker fenced', { reason });
    if (this.activeId === this.opts.self.nodeId) {
      this.activeId = -1;
      this.activeEpoch = -1;
      this.emit('controller');
    }
    this.emit('fenced');
  }

  /**
   * A watch etcd cancelled (it resumed after a disconnection from a revision that a metadata
   * snapshot has since compacted away): read the current state again and watch from there.
   */
  private keep(w: Watcher, follow: () => Promise<void>): void {
    this.watchers.push(w);
    w.on('error', (err) => {
      this.watchers = this.watchers.filter((x) => x !== w);
      if (this.closed) return;
      this.opts.log.warn('cluster watch cancelled; reading again', { err: String(err) });
      const again = (): void =>
        void follow().catch((e: unknown) => {
          this.opts.log.warn('cluster watch failed', { err: String(e) });
          if (!this.closed) setTimeout(again, 1000);
        });
      again();
    });
  }

  private async followBrokers(): Promise<void> {
    const dir = `${this.opts.prefix}/brokers/`;
    const res = await this.client.getAll().prefix(dir).exec();
    this.brokers.clear();
    for (const kv of res.kvs) this.putBroker(kv);
    const w = await this.client.watch().prefix(dir).startRevision(String(BigInt(res.header.revision) + 1n)).create();
    w.on('put', (kv) => {
      this.putBroker(kv);
      this.emit('brokers');
    });
    w.on('delete', (kv) => {
      this.brokers.delete(Number(kv.key.toString().slice(dir.length)));
      this.emit('brokers');
    });
    this.keep(w, () => this.followBrokers());
    this.emit('brokers');
  }

  private async followShutdowns(): Promise<void> {
    const dir = `${this.opts.prefix}/shutdown/`;
    const res = await this.client.getAll().prefix(dir).exec();
    this.shuttingDown.clear();
    for (const kv of res.kvs) this.shuttingDown.add(Number(kv.key.toString().slice(dir.length)));
    const w = await this.client.watch().prefix(dir).startRevision(String(BigInt(res.header.revision) + 1n)).create();
    w.on('put', (kv) => {
      this.shuttingDown.add(Number(kv.key.toString().slice(dir.length)));
      this.emit('brokers');
    });
    w.on('delete', (kv) => {
      this.shuttingDown.delete(Number(kv.key.toString().slice(dir.length)));
      this.emit('brokers');
    });
    this.keep(w, () => this.followShutdowns());
    this.emit('brokers');
  }

  /**
   * Asks the active controller to move this node's leaderships away and take it out of every
   * ISR (Kafka's ControlledShutdownRequest / BrokerHeartbeat wantShutDown). The key is bound to
   * the lease, so it ends with this process.
   */
  async requestControlledShutdown(): Promise<void> {
    if (this.isFenced) return;
    await this.client.put(`${this.opts.prefix}/shutdown/${this.opts.self.nodeId}`).value(this.incarnationId).lease(this.leaseId).exec();
  }

  private putBroker(kv: IKeyValue): void {
    const reg = JSON.parse(kv.value.toString()) as Omit<BrokerRegistration, 'brokerEpoch'>;
    this.brokers.set(reg.nodeId, { ...reg, brokerEpoch: Number(kv.create_revision) });
  }

  private async followController(): Promise<void> {
    const res = await this.client.getAll().prefix(this.controllerKey).exec();
    const kv = res.kvs.find((k) => k.key.toString() === this.controllerKey);
    if (kv) this.setController(Number(kv.value.toString()), Number(kv.create_revision));
    else this.setController(-1, -1);
    const w = await this.client.watch().key(this.controllerKey).startRevision(String(BigInt(res.header.revision) + 1n)).create();
    w.on('put', (k) => this.setController(Number(k.value.toString()), Number(k.create_revision)));
    w.on('delete', () => {
      this.setController(-1, -1);
      void this.campaignIfVacant();
    });
    this.keep(w, () => this.followController());
    await this.campaignIfVacant();
  }

  private setController(id: number, epoch: number): void {
    if (id === this.activeId && epoch === this.activeEpoch) return;
    this.activeId = id;
    this.activeEpoch = epoch;
    this.opts.log.info('active controller', { controllerId: id, controllerEpoch: epoch });
    this.emit('controller');
  }

  private async campaignIfVacant(): Promise<void> {
    if (this.isFenced || this.closed || this.activeId >= 0) return;
    try {
      const key = this.controllerKey;
      const res = await this.client.if(key, 'Create', '==', 0).then(this.client.put(key).value(String(this.opts.self.nodeId)).lease(this.leaseId)).commit();
      if (res.succeeded) this.setController(this.opts.self.nodeId, Number(res.header.revision));
    } catch (err) {
      this.opts.log.warn('controller campaign failed', { err: String(err) });
    }
  }

  /** The condition a controller-only write must still meet; null when this node is not active. */
  controllerFence(): ControllerFence | null {
    if (this.isFenced || this.activeId !== this.opts.self.nodeId) return null;
    return { key: this.controllerKey, createRevision: String(this.activeEpoch) };
  }

  get isActiveController(): boolean {
    return !this.isFenced && this.activeId === this.opts.self.nodeId;
  }

  liveBrokers(): readonly BrokerRegistration[] {
    return [...this.brokers.values()].sort((a, b) => a.nodeId - b.nodeId);
  }

  isLive(nodeId: number): boolean {
    return this.brokers.has(nodeId);
  }

  isEligible(nodeId: number): boolean {
    return this.brokers.has(nodeId) && !this.shuttingDown.has(nodeId);
  }

  controllerId(): number {
    return this.activeId;
  }

  controllerEpoch(): number {
    return this.activeEpoch;
  }

  brokerEpoch(): number {
    return this.myBrokerEpoch;
  }

  on(event: ClusterEvent, cb: () => void): () => void {
    this.events.on(event, cb);
    return () => this.events.off(event, cb);
  }

  private emit(event: ClusterEvent): void {
    try {
      this.events.emit(event);
    } catch (err) {
      this.opts.log.error('cluster listener failed', { event, err: String(err) });
    }
  }

  /** Gives up the lease (registration and controllership end at once) and disconnects. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    for (const w of this.watchers) await w.cancel().catch(() => undefined);
    await this.lease?.revoke().catch(() => undefined);
    this.client.close();
  }
}
