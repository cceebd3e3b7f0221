/**
 * Share sessions (KIP-932, Kafka's ShareSessionCache and ShareSessionContext): one per (group,
 * member), holding the partitions the member fetches so incremental ShareFetch requests name only
 * what changed. ShareSessionEpoch 0 opens a session (replacing the member's previous one), -1 is
 * the final request that closes it, and n > 0 must be the session's next epoch.
 */
import { ErrorCode } from '../protocol/generated/errors.js';

export const FINAL_EPOCH = -1;
export const INITIAL_EPOCH = 0;

export interface SessionPartition {
  readonly topicId: string;
  readonly partition: number;
}

export interface ShareSession {
  readonly groupId: string;
  readonly memberId: string;
  epoch: number;
  readonly partitions: Map<string, SessionPartition>;
  lastUsedMs: number;
}

type SessionOutcome =
  | { readonly kind: 'ok'; readonly session: ShareSession; readonly opened: boolean }
  | { readonly kind: 'final'; readonly session: ShareSession | null }
  | { readonly kind: 'error'; readonly errorCode: number; readonly message: string };

export const partitionKey = (topicId: string, partition: number): string => `${topicId}:${partition}`;

/** Kafka's ShareRequestMetadata.nextEpoch: wraps to 1, never back to 0. */
const nextEpoch = (e: number): number => (e >= 0x7fffffff ? 1 : e + 1);

export class ShareSessionCache {
  private readonly sessions = new Map<string, ShareSession>();

  constructor(
    /** group.share.max.share.sessions */
    private readonly maxSessions: number,
    /** Called with every session that closes or expires, so its members' records are released. */
    private readonly onClose: (s: ShareSession) => void,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  get(groupId: string, memberId: string): ShareSession | undefined {
    return this.sessions.get(`${groupId}\0${memberId}`);
  }

  /**
   * The session a ShareFetch/ShareAcknowledge with `epoch` runs in. `added` and `forgotten` change
   * the session's partitions (a ShareAcknowledge passes none). Acknowledgements need a session
   * (epoch 0 on ShareAcknowledge is the caller's INVALID_SHARE_SESSION_EPOCH).
   */
  begin(groupId: string, memberId: string, epoch: number, added: readonly SessionPartition[], forgotten: readonly SessionPartition[], nowMs: number): SessionOutcome {
    const key = `${groupId}\0${memberId}`;
    const existing = this.sessions.get(key);
    if (epoch === FINAL_EPOCH) return { kind: 'final', session: existing ?? null };
    if (epoch === INITIAL_EPOCH) {
      if (existing !== undefined) this.close(existing);
      else if (this.sessions.size >= this.maxSessions) {
        return { kind: 'error', errorCode: ErrorCode.SHARE_SESSION_LIMIT_REACHED, message: 'The share session cache is full.' };
      }
      const session: ShareSession = { groupId, memberId, epoch: 1, partitions: new Map(), lastUsedMs: nowMs };
      for (const p of added) session.partitions.set(partitionKey(p.topicId, p.partition), p);
      this.sessions.set(key, session);
      return { kind: 'ok', session, opened: true };
    }
    if (existing === undefined) return { kind: 'error', errorCode: ErrorCode.SHARE_SESSION_NOT_FOUND, message: `Share session for member ${memberId} not found.` };
    if (epoch !== existing.epoch) {
      return { kind: 'error', errorCode: ErrorCode.INVALID_SHARE_SESSION_EPOCH, message: `Expected epoch ${existing.epoch}, received ${epoch}.` };
    }
    existing.epoch = nextEpoch(epoch);
    existing.lastUsedMs = nowMs;
    for (const p of added) existing.partitions.set(partitionKey(p.topicId, p.partition), p);
    for (const p of forgotten) existing.partitions.delete(partitionKey(p.topicId, p.partition));
    return { kind: 'ok', session: existing, opened: false };
  }

  close(session: ShareSession): void {
    const key = `${session.groupId}\0${session.memberId}`;
    if (this.sessions.get(key) !== session) return;
    this.sessions.delete(key);
    this.onClose(session);
  }

  /** Closes sessions idle for longer than `idleMs` (their member has stopped fetching). */
  expire(nowMs: number, idleMs: (groupId: string) => number): void {
    for (const s of [...this.sessions.values()]) if (nowMs - s.lastUsedMs > idleMs(s.groupId)) this.close(s);
  }

  /** Closes every session of `memberId` in `groupId` (it left the group or was fenced). */
  closeMember(groupId: string, memberId: string): void {
    const s = this.get(groupId, memberId);
    if (s !== undefined) this.close(s);
  }
}
