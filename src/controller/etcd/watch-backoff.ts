/** How long the etcd client waits before it reconnects its watch stream (etcd3's IBackoff shape). */
interface WatchBackoff {
  readonly duration: number;
  next(context: unknown): WatchBackoff;
}

/**
 * Reconnects of the watch stream back off from 100 ms doubling to at most 1 s (etcd3's default
 * goes up to 30 s): a node that was cut off sees the metadata log again soon after etcd is back,
 * and stays fenced no longer than that.
 */
export function cappedBackoff(duration = 100): WatchBackoff {
  return { duration, next: () => cappedBackoff(Math.min(1000, duration * 2)) };
}
