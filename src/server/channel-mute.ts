/**
 * KIP-219 muting of one connection, as Kafka's ThrottledChannel does it: while muted no frame is
 * read; frames already cut from the socket wait, in order, and are read when the mute ends. The
 * longest throttle asked for wins.
 *
 * Concurrency contract: single event loop; `onUnmuted` runs from a timer once the mute is over.
 */
export class ChannelMute {
  private mutedUntil = 0;
  private timer: NodeJS.Timeout | undefined;
  private held: Buffer[] = [];

  constructor(
    private readonly pauseReading: () => void,
    /** The mute ended: read the held frames (take them with `takeHeld`). */
    private readonly onUnmuted: () => void,
  ) {}

  get muted(): boolean {
    return this.mutedUntil > Date.now();
  }

  /** Mutes for `ms` from now, unless a longer mute is on already. */
  throttle(ms: number): void {
    if (!(ms > 0)) return;
    const until = Date.now() + ms;
    if (until <= this.mutedUntil) return;
    this.mutedUntil = until;
    this.pauseReading();
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.expire(), ms);
  }

  /** Frames that arrived while muted, read once the mute ends. */
  hold(frames: readonly Buffer[]): void {
    this.held.push(...frames);
  }

  /** The held frames, in order (the holder reads them, and holds the rest again if muted anew). */
  takeHeld(): Buffer[] {
    const held = this.held;
    this.held = [];
    return held;
  }

  close(): void {
    clearTimeout(this.timer);
    this.held = [];
  }

  private expire(): void {
    if (this.muted) {
      this.timer = setTimeout(() => this.expire(), Math.max(1, this.mutedUntil - Date.now()));
      return;
    }
    this.onUnmuted();
  }
}
