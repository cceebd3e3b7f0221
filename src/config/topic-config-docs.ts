/**
 * What each topic key does, in one sentence: the documentation DescribeConfigs v3+ returns when a
 * client sets IncludeDocumentation. Every key of TOPIC_CONFIG_DEFS has one (test/config/config-docs.test.ts).
 */
export const TOPIC_CONFIG_DOCS: Readonly<Record<string, string>> = {
  'cleanup.policy': 'How old segments are removed: "delete" drops them by age or size, "compact" keeps the latest record of each key, and both may be listed together.',
  'compression.type': 'The codec this topic stores batches in: one of gzip, snappy, lz4, zstd or uncompressed, or "producer" to keep whatever the producer sent.',
  'delete.retention.ms': 'How long a tombstone stays readable in a compacted topic, so a consumer reading from the start sees the deletion before it is cleaned away.',
  'file.delete.delay.ms': 'How long a removed segment file waits on disk before it is actually deleted.',
  'follower.replication.throttled.replicas': 'The partition:broker replicas (or * for all) whose follower fetching counts against follower.replication.throttled.rate.',
  'flush.messages': 'The number of records appended to a partition after which the node forces its log to disk.',
  'flush.ms': 'The time in milliseconds after which the node forces unflushed records of a partition to disk.',
  'index.interval.bytes': 'How many bytes of records lie between two entries of the offset index; smaller means a denser index and faster lookups.',
  'leader.replication.throttled.replicas': 'The partition:broker replicas (or * for all) whose leader-side serving of follower fetches counts against leader.replication.throttled.rate.',
  'max.compaction.lag.ms': 'The longest a record may stay uncompacted before its segment is compacted whatever the dirty ratio.',
  'max.message.bytes': 'The largest record batch, after compression, that this topic accepts.',
  'message.timestamp.after.max.ms': 'How far in the future, in milliseconds, a record timestamp may lie before the batch is refused.',
  'message.timestamp.before.max.ms': 'How far in the past, in milliseconds, a record timestamp may lie before the batch is refused.',
  'message.timestamp.type': 'Whether records keep the time the producer set (CreateTime) or take the time the node appended them (LogAppendTime).',
  'min.cleanable.dirty.ratio': 'The share of a compacted log not yet compacted at which the cleaner picks it up.',
  'min.compaction.lag.ms': 'The shortest time a record stays uncompacted after it is written.',
  'min.insync.replicas': 'The fewest in-sync replicas that must hold a write before a producer asking for acks=all is answered successfully.',
  'mirror.support.unclean.leader.election': 'For a mirror topic: whether a log truncation waits for every assigned replica rather than only the in-sync ones, so a replica elected uncleanly is truncated too.',
  preallocate: 'Whether a new segment file is given its full size on disk when it is created.',
  'retention.bytes': 'The size a partition may reach before its oldest segments are deleted; -1 means no size limit.',
  'retention.ms': 'How long records are kept before their segment is deleted; -1 means no time limit.',
  'segment.bytes': 'The size at which a partition closes its active segment and starts a new one.',
  'segment.index.bytes': 'The largest size of the offset and time indexes of one segment.',
  'segment.jitter.ms': 'A random amount, up to this many milliseconds, taken off segment.ms so segments of many partitions do not all roll at once.',
  'segment.ms': 'The age after which the active segment is rolled even if it is not full, so retention and compaction can act on it.',
  'unclean.leader.election.enable': 'Whether a replica outside the in-sync set may become leader when no in-sync replica is left, at the risk of losing records.',
};
