/**
 * A kafkajs produce-then-consume round trip: `values` are written to `topic` (auto-created), then
 * read back from the beginning by a new group `g-<topic>` until as many records have arrived.
 * The listener and security tests use it to show a client gets through end to end.
 */
import type { Kafka } from 'kafkajs';

export async function roundTrip(kafka: Kafka, topic: string, values: readonly string[]): Promise<string[]> {
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  await producer.connect();
  await producer.send({ topic, messages: values.map((value) => ({ value })) });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: `g-${topic}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen: string[] = [];
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        eachMessage: async ({ message }) => {
          seen.push(message.value!.toString());
          if (seen.length === values.length) resolve();
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  return seen;
}
