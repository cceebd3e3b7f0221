import { constants as fsc, promises as fsp } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The file operations the log uses, as a seam: `realFileSystem` for production and
 * `FaultyFileSystem` (faulty-file-system.ts) for tests that need failed writes, short writes or
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
    if (buffers.length === 1) {
      const b = buffers[0] as Buffer;
      let done = 0;
      while (done < b.length) {
        const { bytesWritten } = await this.fh.write(b, done, b.length - done, position + done);
        done += bytesWritten;
      }
      return;
    }
    let pending = buffers.filter((b) => b.length > 0);
    let pos = position;
    while (pending.length > 0) {
      const { bytesWritten } = await this.fh.writev(pending, pos);
      pos += bytesWritten;
      let n = bytesWritten;
      const rest: Buffer[] = [];
      for (const b of pending) {
        if (n >= b.length) n -= b.length;
        else {
          rest.push(n > 0 ? b.subarray(n) : b);
          n = 0;
        }
      }
      pending = rest;
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
