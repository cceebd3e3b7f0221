// Disk faults inside a running node, loaded with `node --import <this file>` before Fjord starts.
//
// It wraps the calls Fjord's storage makes through node:fs (src/storage/file-system.ts): files
// are opened with fs.promises.open; small writes go through fs.writeSync / fs.writevSync on the
// handle's descriptor, larger ones through FileHandle.writev, whole small files (checkpoints,
// snapshots) through FileHandle.writeFile; fsync is FileHandle.datasync (segments) or .sync.
//
// FJORD_DISK_FAULTS names a trigger file, read every 50 ms. While it holds
//   {"op": "write" | "fsync", "dirPrefix": "<topic>-"}
// every such call on a file inside a partition directory of FJORD_DISK_FAULTS_LOG_DIR whose name
// starts with dirPrefix fails with EIO, as a disk returning media errors would. Empty, absent or
// any other content: no fault. Each failure is counted in the trigger file's `<file>.hits`.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { basename, dirname, resolve } from 'node:path';

const trigger = process.env.FJORD_DISK_FAULTS;
const logDir = process.env.FJORD_DISK_FAULTS_LOG_DIR;

if (trigger !== undefined && logDir !== undefined) {
  const root = resolve(logDir);
  /** The fault switched on now, or null. */
  let fault = null;
  let hits = 0;
  const poll = () => {
    let next = null;
    try {
      const parsed = JSON.parse(fs.readFileSync(trigger, 'utf8'));
      if ((parsed.op === 'write' || parsed.op === 'fsync') && typeof parsed.dirPrefix === 'string') next = parsed;
    } catch {
      // No trigger: no fault.
    }
    fault = next;
  };
  poll();
  setInterval(poll, 50).unref();

  /** Partition directories are the log dir's direct children. */
  const covered = (path) => {
    const dir = dirname(resolve(path));
    return dirname(dir) === root && fault !== null && basename(dir).startsWith(fault.dirPrefix);
  };
  const fail = (syscall, path) => {
    hits++;
    try {
      fs.writeFileSync(`${trigger}.hits`, String(hits));
    } catch {
      // The count is for the test's figures only.
    }
    const err = new Error(`EIO: i/o error, ${syscall} '${path}'`);
    err.code = 'EIO';
    err.errno = -5;
    err.syscall = syscall;
    err.path = path;
    return err;
  };

  /** Descriptor → path of every file opened through fs.promises.open and not yet closed. */
  const paths = new Map();

  const open = fs.promises.open;
  fs.promises.open = async function (path, ...rest) {
    const fh = await open.call(this, path, ...rest);
    const p = String(path);
    paths.set(fh.fd, p);
    const wrap = (name, op) => {
      const real = fh[name];
      fh[name] = function (...args) {
        if (fault?.op === op && covered(p)) return Promise.reject(fail(name, p));
        return real.apply(this, args);
      };
    };
    wrap('writev', 'write');
    wrap('write', 'write');
    wrap('writeFile', 'write');
    wrap('datasync', 'fsync');
    wrap('sync', 'fsync');
    const close = fh.close;
    fh.close = function (...args) {
      if (paths.get(fh.fd) === p) paths.delete(fh.fd);
      return close.apply(this, args);
    };
    return fh;
  };

  for (const name of ['writeSync', 'writevSync', 'fsyncSync', 'fdatasyncSync']) {
    const real = fs[name];
    const op = name.startsWith('write') ? 'write' : 'fsync';
    fs[name] = function (fd, ...args) {
      const p = paths.get(fd);
      if (p !== undefined && fault?.op === op && covered(p)) throw fail(name, p);
      return real.call(this, fd, ...args);
    };
  }
  // ES module imports of node:fs see the wrapped functions too.
  syncBuiltinESMExports();
}
