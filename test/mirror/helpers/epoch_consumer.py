"""
confluent-kafka (librdkafka) consumer steps for the epoch-bump failover test. librdkafka commits the
leader epoch of the record it read and, on resuming from a committed offset that carries an epoch,
validates the position with OffsetForLeaderEpoch before fetching: the path that hangs when the
destination's partition epoch is below the committed one.

  commit  bootstrap topic group count      read `count` records from 0, commit after the last one
  consume bootstrap topic group want secs  resume the group, read `want` records (reset = error)

Prints one JSON line.
"""
import json
import sys
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition


def consumer(bootstrap, group):
    return Consumer({
        'bootstrap.servers': bootstrap,
        'group.id': group,
        'enable.auto.commit': False,
        # A reset would hide the bug this test looks for: make it an error instead.
        'auto.offset.reset': 'error',
        'session.timeout.ms': 10000,
        'socket.connection.setup.timeout.ms': 3000,
    })


def commit(bootstrap, topic, group, count):
    c = consumer(bootstrap, group)
    c.assign([TopicPartition(topic, 0, 0)])
    last = None
    seen = 0
    deadline = time.time() + 20
    while seen < count and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            raise KafkaException(m.error())
        last = m
        seen += 1
    if last is None or seen < count:
        raise RuntimeError(f'read {seen} of {count} records')
    done = c.commit(message=last, asynchronous=False)
    committed = c.committed([TopicPartition(topic, 0)], timeout=10)[0]
    c.close()
    return {'committedOffset': committed.offset, 'committedLeaderEpoch': committed.leader_epoch,
            'lastEpoch': last.leader_epoch(), 'commitResult': [p.offset for p in done]}


def consume(bootstrap, topic, group, want, secs):
    c = consumer(bootstrap, group)
    c.subscribe([topic])
    got = []
    errors = []
    start = time.time()
    while len(got) < want and time.time() - start < secs:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() != KafkaError._PARTITION_EOF:
                errors.append(m.error().str())
            continue
        got.append({'offset': m.offset(), 'value': m.value().decode(), 'epoch': m.leader_epoch()})
    elapsed = time.time() - start
    c.close()
    return {'records': got, 'errors': errors, 'elapsedMs': int(elapsed * 1000)}


def main():
    step, bootstrap, topic, group = sys.argv[1:5]
    if step == 'commit':
        out = commit(bootstrap, topic, group, int(sys.argv[5]))
    else:
        out = consume(bootstrap, topic, group, int(sys.argv[5]), float(sys.argv[6]))
    print(json.dumps(out))


if __name__ == '__main__':
    try:
        main()
    except Exception as e:  # the caller reads one JSON line either way
        print(json.dumps({'error': type(e).__name__, 'message': str(e)}))
        sys.exit(1)
