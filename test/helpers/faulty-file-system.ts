import { basename } from 'node:path';
import { realFileSystem, type FileSystem, type LogFile } from '../../src/storage/file-system.js';

/** The error a FaultyFileSystem throws for an injected fault. */
export class InjectedFault extends Error {
  override readonly name = 'InjectedFault';
}

/**
 * A FileSystem over the real one that fails on request, for tests of the log's error paths:
 * the next write or fsync fails, the next write stops short (a torn write that then fails), or
 * after a crash point every operation fails as if the process had died (what reached the real
 * file system stays, nothing more does).
 *
 * Concurrency: none of its own; faults apply to whichever call comes next.
 */
export class FaultyFileSystem implements FileSystem {
  private failWrites = 0;
  private failSyncs = 0;
  private shortWriteBytes = -1;
  private crashed = false;
  /** Bytes that may still be written before the crash point; -1 when no crash is armed. */
  private crashBudget = -1;
  /** File names whose next writeFileAtomic fails, with how many times. */
  private readonly failAtomic = new Map<string, number>();
  writes = 0;
  syncs = 0;
  /** writeFileAtomic calls that went through, by file name. */
  readonly atomicWrites = new Map<string, number>();

  constructor(private readonly inner: FileSystem = realFileSystem) {}

  failNextWrite(times = 1): void {
    this.failWrites += times;
  }
  failNextSync(times = 1): void {
    this.failSyncs += times;
  }
  /**
   * The next `times` writeFileAtomic calls to a file named `name` (e.g. a checkpoint file) fail
   * before anything is written: the file keeps its previous content, as after a failed rename.
   */
  failNextAtomicWrite(name: string, times = 1): void {
    this.failAtomic.set(name, (this.failAtomic.get(name) ?? 0) + times);
  }
  /** The next write writes only `bytes` bytes, then fails. */
  shortNextWrite(bytes: number): void {
    this.shortWriteBytes = bytes;
  }
  /** After `bytes` more bytes have been written, the "process" dies: everything fails from then on. */
  crashAfterBytes(bytes: number): void {
    this.crashBudget = bytes;
  }
  crashNow(): void {
    this.crashed = true;
  }
  get isCrashed(): boolean {
    return this.crashed;
  }

  private check(): void {
    if (this.crashed) throw new InjectedFault('crashed');
  }

  /** @internal used by FaultyLogFile */
  async write(file: LogFile, buffers: readonly Buffer[], position: number): Promise<void> {
    this.check();
    this.writes++;
    if (this.failWrites > 0) {
      this.failWrites--;
      throw new InjectedFault('injected write failure');
    }
    const total = buffers.reduce((n, b) => n + b.length, 0);
    let allowed = total;
    let fail = false;
    if (this.shortWriteBytes >= 0) {
      allowed = Math.min(allowed, this.shortWriteBytes);
      this.shortWriteBytes = -1;
      fail = true;
    }
    if (this.crashBudget >= 0) {
      if (allowed >= this.crashBudget) {
        allowed = this.crashBudget;
        this.crashed = true;
        fail = true;
      }
      this.crashBudget -= allowed;
    }
    if (!fail) return file.writeAll(buffers, position);
    const prefix: Buffer[] = [];
    let n = allowed;
    for (const b of buffers) {
      if (n <= 0) break;
      prefix.push(b.subarray(0, Math.min(n, b.length)));
      n -= b.length;
    }
    await file.writeAll(prefix, position);
    throw new InjectedFault(this.crashed ? 'crashed during write' : 'injected short write');
  }

  /** @internal used by FaultyLogFile */
  async sync(file: LogFile): Promise<void> {
    this.check();
    this.syncs++;
    if (this.failSyncs > 0) {
      this.failSyncs--;
      throw new InjectedFault('injected fsync failure');
    }
    return file.sync();
  }

  async open(path: string, mode: 'read' | 'write'): Promise<LogFile> {
    this.check();
    return new FaultyLogFile(this, await this.inner.open(path, mode));
  }
  readFile(path: string): Promise<Buffer> {
    this.check();
    return this.inner.readFile(path);
  }
  writeFileAtomic(path: string, data: Buffer | string): Promise<void> {
    this.check();
    const name = basename(path);
    const left = this.failAtomic.get(name) ?? 0;
    if (left > 0) {
      this.failAtomic.set(name, left - 1);
      return Promise.reject(new InjectedFault(`injected failure writing ${name}`));
    }
    this.atomicWrites.set(name, (this.atomicWrites.get(name) ?? 0) + 1);
    return this.inner.writeFileAtomic(path, data);
  }
  readdir(path: string): Promise<string[]> {
    this.check();
    return this.inner.readdir(path);
  }
  mkdirp(path: string): Promise<void> {
    this.check();
    return this.inner.mkdirp(path);
  }
  exists(path: string): Promise<boolean> {
    this.check();
    return this.inner.exists(path);
  }
  rename(from: string, to: string): Promise<void> {
    this.check();
    return this.inner.rename(from, to);
  }
  unlink(path: string): Promise<void> {
    this.check();
    return this.inner.unlink(path);
  }
  rmrf(path: string): Promise<void> {
    this.check();
    return this.inner.rmrf(path);
  }
  syncDir(path: string): Promise<void> {
    this.check();
    return this.inner.syncDir(path);
  }
}

class FaultyLogFile implements LogFile {
  constructor(
    private readonly fs: FaultyFileSystem,
    private readonly inner: LogFile,
  ) {}
  read(buf: Buffer, bufOffset: number, length: number, position: number): Promise<number> {
    return this.inner.read(buf, bufOffset, length, position);
  }
  writeAll(buffers: readonly Buffer[], position: number): Promise<void> {
    return this.fs.write(this.inner, buffers, position);
  }
  sync(): Promise<void> {
    return this.fs.sync(this.inner);
  }
  truncate(length: number): Promise<void> {
    if (this.fs.isCrashed) return Promise.reject(new InjectedFault('crashed'));
    return this.inner.truncate(length);
  }
  size(): Promise<number> {
    return this.inner.size();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
