/** Topic names and ids, and cluster ids, as Kafka forms and checks them. */
import { randomBytes, randomUUID } from 'node:crypto';
import type { MetadataImage } from './metadata-image.js';

/** Legal topic names (Kafka's `Topic.validate`). */
export function topicNameError(name: string): string | null {
  if (name.length === 0) return 'Topic name is illegal, it can\'t be empty';
  if (name === '.' || name === '..') return 'Topic name cannot be "." or ".."';
  if (name.length > 249) return `Topic name is illegal, it can't be longer than 249 characters, topic name: ${name}`;
  if (!/^[a-zA-Z0-9._-]+$/.test(name)) return `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`;
  return null;
}

/**
 * Kafka refuses a topic whose name equals an existing one once '.' is read as '_' (metric names
 * cannot tell them apart): `a.b` next to `a_b` (Topic.hasCollision).
 */
export function collidingTopic(img: MetadataImage, name: string): string | null {
  const norm = name.replace(/\./g, '_');
  for (const other of img.topicsByName.keys()) if (other !== name && other.replace(/\./g, '_') === norm) return other;
  return null;
}

/** A random topic id as Kafka makes them: a v4 UUID that is neither zero nor METADATA_TOPIC_ID. */
export function newTopicId(): string {
  return randomUUID();
}

/** Kafka's cluster id format: 16 random bytes, URL-safe base64 without padding (22 characters). */
export function newClusterId(): string {
  // Kafka's Uuid.randomUuid draws again when the text would start with '-', which its command-line
  // tools would read as an option.
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}
