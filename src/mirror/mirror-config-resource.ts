/**
 * The CLUSTER_MIRROR config resource (KIP-1279 spec §3.1, §6.2): DescribeConfigs and
 * IncrementalAlterConfigs of resource type 64, validated against the mirror keys of
 * ./mirror-config.ts and written as ConfigRecords through the control queue.
 */
import { ErrorCode } from '../protocol/generated/errors.js';
import type { ControlQueue } from './control-queue.js';
import type { TopLevelResult } from './control-results.js';
import { isSensitiveMirrorKey, mirrorConfigDefault, mirrorConfigKeys, splitList, validateMirrorConfigEntry, validateMirrorConnection } from './mirror-config.js';
import type { MirrorConfigAlteration, MirrorConfigEntry, MirrorControllerOp, MirrorHost } from './mirror-host.js';

/** IncrementalAlterConfigs operations (AlterConfigOp.OpType). */
const OP = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;

export class MirrorConfigResource {
  constructor(
    private readonly host: MirrorHost,
    private readonly queue: ControlQueue,
  ) {}

  describeMirrorConfig(mirrorName: string): MirrorConfigEntry[] | null {
    const cfg = this.host.mirrorConfigs().get(mirrorName);
    if (cfg === undefined) return null;
    return mirrorConfigKeys().map((name) => {
      const set = cfg.get(name);
      const sensitive = isSensitiveMirrorKey(name);
      return { name, value: sensitive ? null : (set ?? mirrorConfigDefault(name)), isDefault: set === undefined, isSensitive: sensitive };
    });
  }

  alterMirrorConfig(mirrorName: string, alterations: readonly MirrorConfigAlteration[], validateOnly: boolean): Promise<TopLevelResult> {
    return this.queue.serial(async () => {
      const cfg = this.host.mirrorConfigs().get(mirrorName);
      if (cfg === undefined) return { errorCode: ErrorCode.UNKNOWN_CLUSTER_MIRROR, errorMessage: `unknown cluster mirror ${mirrorName}` };
      const next = new Map(cfg);
      for (const a of alterations) {
        let value: string | null;
        const cur = splitList(next.get(a.name) ?? mirrorConfigDefault(a.name));
        switch (a.op) {
          case OP.SET:
            value = a.value;
            break;
          case OP.DELETE:
            value = null;
            break;
          case OP.APPEND:
            value = [...cur, ...splitList(a.value).filter((v) => !cur.includes(v))].join(',');
            break;
          case OP.SUBTRACT:
            value = cur.filter((v) => !splitList(a.value).includes(v)).join(',');
            break;
          default:
            return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `unknown config operation ${a.op}` };
        }
        const problem = validateMirrorConfigEntry(a.name, value);
        if (problem !== null) return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: problem };
        if (a.name === 'mirror.source.cluster.id' && value !== cfg.get(a.name)) {
          return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: 'mirror.source.cluster.id cannot be changed' };
        }
        if (value === null) next.delete(a.name);
        else next.set(a.name, value);
      }
      const unusable = validateMirrorConnection(next);
      if (unusable !== null) return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: unusable };
      if (validateOnly) return { errorCode: 0, errorMessage: null };
      const ops: MirrorControllerOp[] = [];
      for (const [k, v] of next) if (cfg.get(k) !== v) ops.push({ type: 'mirrorConfig', mirrorName, name: k, value: v });
      for (const k of cfg.keys()) if (!next.has(k)) ops.push({ type: 'mirrorConfig', mirrorName, name: k, value: null });
      return this.queue.write(ops);
    });
  }
}
