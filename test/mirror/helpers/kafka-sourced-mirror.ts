/**
 * The setup of the mirror tests whose source is Apache Kafka and whose destination is a
 * MirrorTestHost: a Kafka source broker, the host on a fresh work directory, the mirror API
 * handlers on it and the RPC shorthands. `close` ends them in reverse order and removes the
 * work directory; a start that fails half-way ends what it had started.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMirrorApiHandlers } from '../../../src/mirror/mirror-api-handlers.js';
import type { MirrorApiHandlers } from '../../../src/mirror/mirror-host.js';
import { startKafkaSource, type KafkaBroker } from './kafka-source.js';
import { mirrorRpc } from './mirror-rpc.js';
import { MirrorTestHost } from './mirror-test-host.js';

export interface KafkaSourcedMirror {
  readonly kafka: KafkaBroker;
  readonly host: MirrorTestHost;
  readonly mirror: MirrorApiHandlers;
  readonly rpc: ReturnType<typeof mirrorRpc>;
  close(): Promise<void>;
}

/** `workPrefix` names the temporary work directory; `hostConfig` is the destination's broker config. */
export async function startKafkaSourcedMirror(workPrefix: string, hostConfig: Record<string, string>): Promise<KafkaSourcedMirror> {
  const work = mkdtempSync(join(tmpdir(), workPrefix));
  let kafka: KafkaBroker | undefined;
  let host: MirrorTestHost | undefined;
  let mirror: MirrorApiHandlers | undefined;
  const close = async (): Promise<void> => {
    await mirror?.close();
    await host?.close();
    await kafka?.stop();
    rmSync(work, { recursive: true, force: true });
  };
  try {
    kafka = await startKafkaSource();
    host = new MirrorTestHost(work, hostConfig);
    mirror = await createMirrorApiHandlers(host);
    return { kafka, host, mirror, rpc: mirrorRpc(mirror), close };
  } catch (err) {
    await close();
    throw err;
  }
}
