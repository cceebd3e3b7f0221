/**
 * What each group key does, in one sentence: the documentation DescribeConfigs v3+ returns when a
 * client sets IncludeDocumentation. Every key of GROUP_CONFIG_DEFS has one (test/config/config-docs.test.ts).
 */
export const GROUP_CONFIG_DOCS: Readonly<Record<string, string>> = {
  'consumer.session.timeout.ms': 'How long a member of this consumer group may go without a heartbeat before it is removed from the group.',
  'consumer.heartbeat.interval.ms': 'How often members of this consumer group are told to send a heartbeat.',
  'share.session.timeout.ms': 'How long a member of this share group may go without a heartbeat before it is removed from the group.',
  'share.heartbeat.interval.ms': 'How often members of this share group are told to send a heartbeat.',
  'share.record.lock.duration.ms': 'How long a record handed to a member of this share group stays locked to it before it may be delivered again.',
  'share.delivery.count.limit': 'How many times a record may be delivered to this share group before it is archived as undeliverable.',
  'share.partition.max.record.locks': 'How many records of one partition may be locked to members of this share group at once.',
  'share.auto.offset.reset': 'Where this share group starts reading a partition it has no position in: latest, earliest, or by_duration:<ISO-8601 duration> back from now.',
  'share.isolation.level': 'Whether this share group reads records of transactions not yet committed (read_uncommitted) or only committed ones (read_committed).',
  'streams.session.timeout.ms': 'How long a member of this streams group may go without a heartbeat before it is removed from the group.',
  'streams.heartbeat.interval.ms': 'How often members of this streams group are told to send a heartbeat.',
  'streams.num.standby.replicas': 'How many standby copies of each stateful task this streams group keeps on other members.',
};
