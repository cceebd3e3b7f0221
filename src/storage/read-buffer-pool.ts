/**
 * Reusable Buffers for the fetch path's reads, so serving a Fetch does not allocate (and later
 * garbage-collect) a fresh buffer the size of its response. Kafka avoids the copy altogether with
 * sendfile (FileRecords.writeTo → FileChannel.transferTo); Node has no sendfile for sockets, so
 * Fjord reads segment ranges into one of these and hands its slices to the socket.
 *
 * Buffers come in power-of-two sizes from MIN_CLASS to MAX_CLASS; a larger request gets a plain
 * unpooled allocation. A released buffer is kept for reuse while the pool holds less than
 * `maxRetainedBytes`, else dropped to the garbage collector.
 *
 * Ownership contract: whoever acquires a buffer owns it until it calls `release`, and must not
 * touch it afterwards; the fetch path releases once the socket has taken the whole response.
 * A buffer that is never released (a closed connection, an in-process caller) is simply
 * collected, so forgetting to release costs an allocation, never correctness. Releasing a buffer
 * twice, or one the pool did not hand out, is ignored.
 */
const MIN_CLASS = 64 * 1024;
const MAX_CLASS = 16 * 1024 * 1024;

export class ReadBufferPool {
  private readonly free = new Map<number, Buffer[]>();
  /** Buffers handed out and not yet released: the guard against a double release. */
  private readonly outstanding = new WeakSet<Buffer>();
  private retained = 0;

  constructor(readonly maxRetainedBytes: number) {}

  /** Bytes currently kept for reuse. */
  get retainedBytes(): number {
    return this.retained;
  }

  /** A buffer of at least `n` bytes (its contents are stale). */
  acquire(n: number): Buffer {
    if (n > MAX_CLASS) return Buffer.allocUnsafeSlow(n);
    const size = classOf(n);
    const buf = this.free.get(size)?.pop();
    if (buf !== undefined) this.retained -= size;
    const out = buf ?? Buffer.allocUnsafeSlow(size);
    this.outstanding.add(out);
    return out;
  }

  /** Gives `buf` (from `acquire`) back; the caller must not use it again. */
  release(buf: Buffer): void {
    if (!this.outstanding.delete(buf)) return;
    const size = buf.length;
    if (this.retained + size > this.maxRetainedBytes) return;
    let list = this.free.get(size);
    if (list === undefined) {
      list = [];
      this.free.set(size, list);
    }
    list.push(buf);
    this.retained += size;
  }
}

/** The smallest power of two ≥ n, and at least MIN_CLASS. */
function classOf(n: number): number {
  let size = MIN_CLASS;
  while (size < n) size *= 2;
  return size;
}
