/**
 * A node's membership in an etcd-backed cluster: its lease, its broker registration, the view of
 * every other registration, and the controller election.
 *
 * - Lease: TTL `broker.session.timeout.ms` (rounded up to whole seconds, etcd's unit), renewed
 *   every `broker.heartbeat.interval.ms` (Kafka's BrokerLifecycleManager heartbeats). etcd counts
 *   a lease's TTL from the moment it receives the grant or keepalive, which is after this node
 *   sent it; so the node fences itself a safety margin before `sent + TTL` of its last successful
 *   renewal, on the monotonic clock, by a timer of its own and by every read of `fenced`. Neither
 *   the heartbeat period, nor a renewal that hangs, nor a wall-clock jump can delay it: the node
 *   stops acting as leader strictly before etcd can expire its lease and let another be elected
 *   (the timing: ./lease-clock.ts).
 *   A fenced node registers again with a new lease (a new broker epoch), as a Kafka broker
 *   re-registers after its session expired.
 * - Catching up (KRaft keeps a registering broker fenced until its metadata reached the log end
 *   it was given): a registration reads the metadata log's last offset in the same transaction,
 *   and the node stays fenced (no controller campaign, no leadership, no Metadata answer naming
 *   it leader) until its image has applied that offset. A returning node would otherwise lead on
 *   the image it had before it was cut off.
 * - Start grace (KRaft gives every broker a fresh session when a controller takes over): for one
 *   session timeout after this node registered, a node it cannot see is not yet taken out of
 *   leaderships and ISRs when this node is the controller (`awaitingReturn`). After etcd was
 *   unreachable from every node, every lease expired at once; the first node back would
 *   otherwise shrink every ISR to itself before the others had had a chance to register again.
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
import { cappedBackoff } from './watch-backoff.js';
import { LeaseClock, monoNow } from './lease-clock.js';


interface EtcdQuorumOptions {
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
  private readonly leaseClock: LeaseClock;
  private fenceTimer: NodeJS.Timeout | null = null;
  private graceTimer: NodeJS.Timeout | null = null;
  /** Monotonic time of this node's last registration (the start grace counts from it). */
  private registeredAt = -Infinity;
  /** The metadata offset this node must have applied before it may act; null once it has. */
  private catchUpTo: number | null = null;
  private metadataOffset: (() => number) | null = null;
  private onCatchUp: (() => void) | null = null;
  private myBrokerEpoch = -1;
  private activeId = -1;
  private activeEpoch = -1;
  private isFenced = true;
  private timer: NodeJS.Timeout | null = null;
  private watchers: Watcher[] = [];
  private busy = false;
  private closed = false;

  private constructor(private readonly opts: EtcdQuorumOptions) {
    this.leaseClock = new LeaseClock(opts.sessionTimeoutMs);
    this.client = new Etcd3({ hosts: [...opts.endpoints], dialTimeout: 5000, faultHandling: { watchBackoff: cappedBackoff() } });
  }

  static create(opts: EtcdQuorumOptions): EtcdQuorum {
    return new EtcdQuorum(opts);
  }

  get prefix(): string {
    return this.opts.prefix;
  }

  /**
   * True while this node may not act: not registered, its last renewal too old to be sure the
   * lease is still there, or its metadata not yet caught up to the log end seen at registration.
   */
  get fenced(): boolean {
    return this.isFenced || this.catchUpTo !== null || this.leaseLapsed();
  }

  private get ttlSeconds(): number {
    return this.leaseClock.ttlSeconds;
  }

  private leaseLapsed(): boolean {
    return this.leaseClock.lapsed();
  }

  /** A successful grant or renewal sent at `sentAt`: the self-fence moves to `sentAt + safeLeaseMs`. */
  private renewed(sentAt: number): void {
    this.leaseClock.renewed(sentAt);
    this.armFenceTimer();
  }

  private armFenceTimer(): void {
    if (this.fenceTimer) clearTimeout(this.fenceTimer);
    // +1: a timer may fire up to a millisecond early; it then arms itself again for the rest.
    const wait = this.leaseClock.msLeft() + 1;
    this.fenceTimer = setTimeout(() => {
      this.fenceTimer = null;
      if (this.isFenced) return;
      if (this.leaseLapsed()) this.fence('the lease was not renewed in time to be sure it is still held');
      else this.armFenceTimer();
    }, wait);
    this.fenceTimer.unref();
  }

  /**
   * Where the applied metadata offset is read and when it moves (the controller's image): until
   * this is called, and after each registration until the offset reached the log end seen then,
   * the node stays fenced.
   */
  trackMetadata(offset: () => number, onChange: (cb: () => void) => () => void, catchUp?: () => void): void {
    this.metadataOffset = offset;
    this.onCatchUp = catchUp ?? null;
    onChange(() => this.checkCaughtUp());
    this.checkCaughtUp();
  }

  private checkCaughtUp(): void {
    if (this.isFenced || this.catchUpTo === null || this.metadataOffset === null) return;
    const applied = this.metadataOffset();
    if (applied < this.catchUpTo) return;
    this.opts.log.info('broker metadata caught up', { offset: applied, registrationOffset: this.catchUpTo, fencedForMs: Math.round(monoNow() - this.registeredAt) });
    this.catchUpTo = null;
    this.emit('unfenced');
    void this.campaignIfVacant();
  }

  /**
   * True for a node this node cannot see, within one session timeout of its own registration:
   * it may be registering again (every lease expired at once while etcd was unreachable), so the
   * active controller keeps it in leaderships and ISRs until that session has passed.
   */
  awaitingReturn(nodeId: number): boolean {
    return !this.brokers.has(nodeId) && !this.shuttingDown.has(nodeId) && monoNow() - this.registeredAt < this.opts.sessionTimeoutMs;
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
    const deadline = monoNow() + this.ttlSeconds * 1000 + 1000;
    let registered = await this.register();
    while (!registered && monoNow() < deadline) {
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
    // Taken before the grant: etcd starts the TTL when the grant arrives, never earlier.
    const sentAt = monoNow();
    const lease = this.client.lease(this.ttlSeconds, { autoKeepAlive: false });
    const leaseId = await lease.grant();
    const value = JSON.stringify({ ...this.opts.self, incarnationId: this.incarnationId });
    const headKey = `${this.opts.prefix}/metadata/log-head`;
    const res = await this.client
      .if(this.brokerKey, 'Create', '==', 0)
      .then(this.client.put(this.brokerKey).value(value).lease(leaseId), this.client.get(headKey))
      .commit();
    if (!res.succeeded) {
      await lease.revoke().catch(() => undefined);
      return false;
    }
    if (this.closed) {
      await lease.revoke().catch(() => undefined);
      return false;
    }
    const head = res.responses[1]?.response_range?.kvs[0]?.value.toString();
    this.lease = lease;
    this.leaseId = leaseId;
    this.leaseClock.reset();
    this.renewed(sentAt);
    this.myBrokerEpoch = Number(res.header.revision);
    this.isFenced = false;
    this.registeredAt = monoNow();
    this.catchUpTo = head === undefined ? -1 : Number(head);
    if (this.graceTimer) clearTimeout(this.graceTimer);
    // The start grace ends: the controller looks again at the nodes it still cannot see.
    this.graceTimer = setTimeout(() => this.emit('brokers'), this.opts.sessionTimeoutMs + 1);
    this.graceTimer.unref();
    this.opts.log.info('broker registered', { brokerEpoch: this.myBrokerEpoch, ttlSeconds: this.ttlSeconds, registrationOffset: this.catchUpTo });
    this.onCatchUp?.();
    this.checkCaughtUp();
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
      if (this.leaseLapsed()) {
        this.fence('the lease was not renewed in time to be sure it is still held');
        return;
      }
      const lease = this.lease!;
      const sentAt = monoNow();
      const res = await lease.keepaliveOnce({ deadline: Date.now() + this.opts.heartbeatIntervalMs * 2 });
      // A renewal answered after the node fenced itself (or for a lease it gave up) counts for nothing.
      if (this.isFenced || this.lease !== lease) return;
      if (Number(res.TTL) <= 0) this.fence('the lease expired');
      else this.renewed(sentAt);
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
    if (this.fenceTimer) clearTimeout(this.fenceTimer);
    this.fenceTimer = null;
    const lease = this.lease;
    this.lease = null;
    // Given up at once where etcd is still reachable, so the registration (and the election key,
    // when this node held it) end now and the others need not wait for the TTL.
    void lease?.revoke().catch(() => undefined);
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

  private followBrokers(): Promise<void> {
    return this.followDirectory('brokers', () => this.followBrokers(), {
      reset: () => this.brokers.clear(),
      put: (_id, kv) => this.putBroker(kv),
      delete: (id) => this.brokers.delete(id),
    });
  }

  private followShutdowns(): Promise<void> {
    return this.followDirectory('shutdown', () => this.followShutdowns(), {
      reset: () => this.shuttingDown.clear(),
      put: (id) => this.shuttingDown.add(id),
      delete: (id) => this.shuttingDown.delete(id),
    });
  }

  /**
   * Reads every key of `<prefix>/<dir>/<node id>`, then watches the directory from the next
   * revision; each change is told as a change of the brokers.
   */
  private async followDirectory(dir: string, again: () => Promise<void>, on: { reset(): void; put(nodeId: number, kv: IKeyValue): void; delete(nodeId: number): void }): Promise<void> {
    const path = `${this.opts.prefix}/${dir}/`;
    const nodeIdOf = (kv: IKeyValue): number => Number(kv.key.toString().slice(path.length));
    const res = await this.client.getAll().prefix(path).exec();
    on.reset();
    for (const kv of res.kvs) on.put(nodeIdOf(kv), kv);
    const w = await this.client.watch().prefix(path).startRevision(String(BigInt(res.header.revision) + 1n)).create();
    w.on('put', (kv) => {
      on.put(nodeIdOf(kv), kv);
      this.emit('brokers');
    });
    w.on('delete', (kv) => {
      on.delete(nodeIdOf(kv));
      this.emit('brokers');
    });
    this.keep(w, again);
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
    if (this.fenced || this.closed || this.activeId >= 0) return;
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
    if (this.fenced || this.activeId !== this.opts.self.nodeId) return null;
    return { key: this.controllerKey, createRevision: String(this.activeEpoch) };
  }

  get isActiveController(): boolean {
    return !this.fenced && this.activeId === this.opts.self.nodeId;
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
    if (this.fenceTimer) clearTimeout(this.fenceTimer);
    if (this.graceTimer) clearTimeout(this.graceTimer);
    for (const w of this.watchers) await w.cancel().catch(() => undefined);
    await this.lease?.revoke().catch(() => undefined);
    this.client.close();
  }
}
