import { constants as fsc, promises as fsp, writeSync, writevSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The file operations the log uses, as a seam: `realFileSystem` for production and
 * `FaultyFileSystem` (in the test helpers) for tests that need failed writes, short writes or
 * crash points. Positions are explicit on every call; handles keep no cursor.
 */
export interface LogFile {
  /** Reads up to `length` bytes at `position` into `buf[bufOffset..]`; returns the bytes read (0 at end). */
  read(buf: Buffer, bufOffset: number, length: number, position: number): Promise<number>;
  /** Writes all the buffers at `position`, in order, retrying partial writes. */
  writeAll(buffers: readonly Buffer[], position: number): Promise<void>;
  /** fdatasync: the data (and the size) is on disk when this resolves. */
  sync(): Promise<void>;
  truncate(length: number): Promise<void>;
  size(): Promise<number>;
  close(): Promise<void>;
}

export interface FileSystem {
  /** 'read' opens an existing file; 'write' opens or creates one for reading and writing. */
  open(path: string, mode: 'read' | 'write'): Promise<LogFile>;
  readFile(path: string): Promise<Buffer>;
  /** Replaces the file with `data` atomically and durably (temp file, fsync, rename, directory fsync). */
  writeFileAtomic(path: string, data: Buffer | string): Promise<void>;
  readdir(path: string): Promise<string[]>;
  mkdirp(path: string): Promise<void>;
  exists(path: string): Promise<boolean>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** Removes a directory and everything under it. */
  rmrf(path: string): Promise<void>;
  /** fsync of a directory, so that created, renamed and deleted entries survive a crash. */
  syncDir(path: string): Promise<void>;
}

/**
 * Writes of at most this many bytes in all are made on the calling thread. A write into the page
 * cache of a few KiB takes microseconds, and handing it to libuv's thread pool costs more than
 * that: a wake-up of a pool thread, its completion signalled back to the event loop, and on two
 * cores the context switches between them (measured: 10–22 µs of process CPU per 16 KiB write
 * made in place, 32–91 µs through the pool). A produce request's batches are this size (a
 * producer's `batch.size` is 16 KiB by default). Larger writes, a mirror's fetched partitions and
 * the cleaner's output, still go to the pool, so their copy into the page cache runs beside the
 * event loop instead of holding it.
 */
export const INLINE_WRITE_MAX_BYTES = 128 * 1024;

/** What is left of `pending` once `n` bytes of it were written. */
function unwritten(pending: readonly Buffer[], n: number): Buffer[] {
  const rest: Buffer[] = [];
  for (const b of pending) {
    if (n >= b.length) n -= b.length;
    else {
      rest.push(n > 0 ? b.subarray(n) : b);
      n = 0;
    }
  }
  return rest;
}

class RealLogFile implements LogFile {
  constructor(private readonly fh: fsp.FileHandle) {}

  async read(buf: Buffer, bufOffset: number, length: number, position: number): Promise<number> {
    let done = 0;
    while (done < length) {
      const { bytesRead } = await this.fh.read(buf, bufOffset + done, length - done, position + done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    return done;
  }

  async writeAll(buffers: readonly Buffer[], position: number): Promise<void> {
    let total = 0;
    for (const b of buffers) total += b.length;
    if (total <= INLINE_WRITE_MAX_BYTES) {
      this.writeAllInline(buffers, position);
      return;
    }
    let pending = buffers.filter((b) => b.length > 0);
    let pos = position;
    while (pending.length > 0) {
      const { bytesWritten } = await this.fh.writev(pending, pos);
      pos += bytesWritten;
      pending = unwritten(pending, bytesWritten);
    }
  }

  /** writeAll on the calling thread (a failure throws, and so rejects writeAll's promise). */
  private writeAllInline(buffers: readonly Buffer[], position: number): void {
    const fd = this.fh.fd;
    let pending = buffers.length === 1 ? buffers : buffers.filter((b) => b.length > 0);
    let pos = position;
    while (pending.length > 0) {
      const n = pending.length === 1 ? writeSync(fd, pending[0] as Buffer, 0, (pending[0] as Buffer).length, pos) : writevSync(fd, pending, pos);
      pos += n;
      pending = unwritten(pending, n);
    }
  }

  sync(): Promise<void> {
    return this.fh.datasync();
  }
  truncate(length: number): Promise<void> {
    return this.fh.truncate(length);
  }
  async size(): Promise<number> {
    return (await this.fh.stat()).size;
  }
  close(): Promise<void> {
    return this.fh.close();
  }
}

export const realFileSystem: FileSystem = {
  async open(path, mode) {
    const flags = mode === 'read' ? fsc.O_RDONLY : fsc.O_RDWR | fsc.O_CREAT;
    return new RealLogFile(await fsp.open(path, flags, 0o644));
  },
  readFile: (path) => fsp.readFile(path),
  async writeFileAtomic(path, data) {
    const tmp = `${path}.tmp`;
    const fh = await fsp.open(tmp, 'w', 0o644);
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, path);
    await realFileSystem.syncDir(dirname(path));
  },
  readdir: (path) => fsp.readdir(path),
  async mkdirp(path) {
    await fsp.mkdir(path, { recursive: true });
  },
  async exists(path) {
    try {
      await fsp.access(path);
      return true;
    } catch {
      return false;
    }
  },
  rename: (from, to) => fsp.rename(from, to),
  unlink: (path) => fsp.unlink(path),
  rmrf: (path) => fsp.rm(path, { recursive: true, force: true }),
  async syncDir(path) {
    const fh = await fsp.open(path, fsc.O_RDONLY);
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  },
};
