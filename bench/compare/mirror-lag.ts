/**
 * Steady-state mirror lag: a Kafka source receives 1 KiB records at a fixed rate
 * (ProducerPerformance --throughput, acks=1) into 8 partitions while a mirror copies them to a
 * destination: a Fjord node (KIP-1279) or MirrorMaker 2 into a second Kafka. Once the mirror has
 * caught up with what the producer wrote while it was starting, and a warm-up after that (so
 * neither mirror's start-up is counted), kcat on the destination prints each record's CreateTime as it
 * arrives; a record's lag is that moment minus the time the producer stamped on it (same machine,
 * same clock). Both mirrors keep the source's CreateTime: Fjord copies the batches as they are,
 * MM2 sets each record's timestamp from the source record.
 */
import { type Broker } from './brokers.js';
import { OffsetPoller, mirrorMakerTopic, withFjordMirror, withMirrorMaker } from './mirror.js';
import { backgroundProducer, createTopic, endToEndConsumer } from './perf-tools.js';

export const LAG_RATE = 5000;
export const LAG_RECORD_SIZE = 1024;
export const LAG_PARTITIONS = 8;
/** After the mirror has caught up, before kcat starts: lets the fetch loops and batching settle. */
const WARM_UP_MS = 3000;
const POLL_MS = 100;

export type LagMirror = 'fjord' | 'mm2';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `until` every POLL_MS until it holds, or throws `what` at `deadline`. */
async function poll(what: string, deadline: number, until: () => Promise<boolean>): Promise<void> {
  while (!(await until())) {
    if (Date.now() > deadline) throw new Error(`${what} before the deadline`);
    await sleep(POLL_MS);
  }
}

/**
 * One lag run on a fresh, empty topic of `source`: the mirror started first, and the fixed-rate
 * producer only once the mirrored topic exists on the destination, so the backlog the mirror
 * copies before it is in steady state is what the producer wrote while the mirror's fetching
 * began, not the whole of its start-up (MM2's JVM and Connect workers take tens of seconds).
 * Then: the first record on the destination, the destination holding every record the source
 * held at that moment, the warm-up, and `seconds` of kcat on the destination. The producer is
 * stopped, and checked to have run throughout, at the end.
 */
export async function mirrorLag(source: Broker, dest: Broker, mirror: LagMirror, mirrorConfig: Readonly<Record<string, string>>, seconds: number, deadlineMs: number): Promise<number[]> {
  const topic = `mirror-lag-${mirror}`;
  const destTopic = mirror === 'fjord' ? topic : mirrorMakerTopic(topic);
  await createTopic(source.bootstrap, topic, LAG_PARTITIONS);
  // Set inside `run`, stopped here: the mirror is stopped first, the producer after it.
  const writer: { producer?: ReturnType<typeof backgroundProducer> } = {};
  const run = async (): Promise<number[]> => {
    const deadline = Date.now() + deadlineMs;
    const src = await OffsetPoller.open(source.bootstrap);
    const dst = await OffsetPoller.open(dest.bootstrap);
    try {
      await poll(`${destTopic} was not created on the destination`, deadline, async () => (await dst.partitions(destTopic)) === LAG_PARTITIONS);
      writer.producer = backgroundProducer(source.bootstrap, { topic, recordSize: LAG_RECORD_SIZE, acks: '1', compression: 'none', throughput: LAG_RATE });
      await poll(`no record reached ${destTopic}`, deadline, async () => (await dst.total(destTopic)) > 0);
      const backlog = await src.total(topic);
      await poll(`${destTopic} did not catch up with ${backlog} records`, deadline, async () => (await dst.total(destTopic)) >= backlog);
    } finally {
      await Promise.all([src.close(), dst.close()]);
    }
    await sleep(WARM_UP_MS);
    const e2e = endToEndConsumer(dest.bootstrap, destTopic);
    await e2e.ready;
    await sleep(seconds * 1000);
    const lags = await e2e.stop();
    if (lags.length === 0) throw new Error(`kcat saw no records on ${destTopic} in ${seconds} s`);
    return lags;
  };
  let lags: number[];
  try {
    lags = mirror === 'fjord' ? await withFjordMirror(source, dest, topic, mirrorConfig, run) : await withMirrorMaker(source, dest, topic, run);
  } catch (e) {
    await writer.producer?.stop().catch(() => undefined);
    throw e;
  }
  // Throws if the producer exited early: then the rate was not held throughout.
  await writer.producer?.stop();
  return lags;
}
