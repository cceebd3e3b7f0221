"""Python client scenarios for the interop harness.

Usage: scenarios.py confluent-kafka|kafka-python BOOTSTRAP TOPIC

Creates a 3-partition topic, produces 20 keyed records with headers (record i to partition i % 3),
reads them back with a consumer group, commits, and prints what the client observed as one JSON
line: produced offsets, consumed records, committed offsets, watermarks, and the error seen when
creating the topic a second time.
"""
import json
import sys
import time

COUNT = 20
DEADLINE_S = 90


def run_confluent(bootstrap, topic):
    from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    common = {"bootstrap.servers": bootstrap, "socket.connection.setup.timeout.ms": 3000}
    admin = AdminClient(common)
    admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)], operation_timeout=15)[topic].result(timeout=20)
    try:
        admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])[topic].result(timeout=20)
        duplicate = "NONE"
    except Exception as e:  # KafkaException wrapping a KafkaError
        err = e.args[0] if e.args else e
        duplicate = err.name() if hasattr(err, "name") else type(e).__name__
    partitions = len(admin.list_topics(topic, timeout=20).topics[topic].partitions)

    produced = []
    errors = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(err.name())
        else:
            produced.append((msg.partition(), msg.offset(), msg.key().decode()))

    p = Producer({**common, "linger.ms": 5, "message.timeout.ms": 20000, "enable.idempotence": True})
    for i in range(COUNT):
        p.produce(topic, key=f"k{i}", value=f"v{i}", partition=i % 3, headers=[("i", str(i).encode())],
                  timestamp=1_700_000_000_000 + i, on_delivery=on_delivery)
    if p.flush(30) != 0 or errors:
        raise RuntimeError(f"produce failed: {errors}")

    c = Consumer({**common, "group.id": f"{topic}-group", "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, "session.timeout.ms": 10000})
    c.subscribe([topic])
    consumed = []
    deadline = time.time() + DEADLINE_S
    while len(consumed) < COUNT and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                continue
            raise RuntimeError(f"consume error: {m.error().name()}")
        consumed.append({"partition": m.partition(), "offset": m.offset(), "key": m.key().decode(),
                         "value": m.value().decode(), "timestamp": m.timestamp()[1],
                         "headers": [f"{k}={v.decode()}" for k, v in (m.headers() or [])]})
    if not consumed:
        raise RuntimeError(f"consumed nothing within {DEADLINE_S} s")
    c.commit(asynchronous=False)
    tps = [TopicPartition(topic, i) for i in range(3)]
    committed = {str(tp.partition): tp.offset for tp in c.committed(tps, timeout=20)}
    watermarks = {str(i): list(c.get_watermark_offsets(TopicPartition(topic, i), timeout=20)) for i in range(3)}
    c.close()
    return produced, consumed, committed, watermarks, duplicate, partitions


def run_kafka_python(bootstrap, topic):
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import NewTopic
    from kafka.errors import KafkaError

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=20000)
    admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])
    try:
        admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])
        duplicate = "NONE"
    except KafkaError as e:
        duplicate = type(e).__name__
    partitions = len(admin.describe_topics([topic])[0]["partitions"])
    admin.close()

    p = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, request_timeout_ms=20000)
    futures = [p.send(topic, key=f"k{i}".encode(), value=f"v{i}".encode(), partition=i % 3,
                      headers=[("i", str(i).encode())], timestamp_ms=1_700_000_000_000 + i) for i in range(COUNT)]
    p.flush(30)
    produced = []
    for i, f in enumerate(futures):
        md = f.get(timeout=30)
        produced.append((md.partition, md.offset, f"k{i}"))
    p.close()

    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=f"{topic}-group", auto_offset_reset="earliest",
                      enable_auto_commit=False, session_timeout_ms=10000, request_timeout_ms=30000)
    c.subscribe([topic])
    consumed = []
    deadline = time.time() + DEADLINE_S
    while len(consumed) < COUNT and time.time() < deadline:
        for recs in c.poll(timeout_ms=500).values():
            for m in recs:
                consumed.append({"partition": m.partition, "offset": m.offset, "key": m.key.decode(),
                                 "value": m.value.decode(), "timestamp": m.timestamp,
                                 "headers": [f"{k}={v.decode()}" for k, v in (m.headers or [])]})
    c.commit()
    tps = [TopicPartition(topic, i) for i in range(3)]
    committed = {str(tp.partition): c.committed(tp) for tp in tps}
    begin = c.beginning_offsets(tps)
    end = c.end_offsets(tps)
    watermarks = {str(tp.partition): [begin[tp], end[tp]] for tp in tps}
    c.close()
    return produced, consumed, committed, watermarks, duplicate, partitions


def main():
    client, bootstrap, topic = sys.argv[1:4]
    fn = {"confluent-kafka": run_confluent, "kafka-python": run_kafka_python}[client]
    produced, consumed, committed, watermarks, duplicate, partitions = fn(bootstrap, topic)
    produced.sort(key=lambda t: int(t[2][1:]))
    consumed.sort(key=lambda r: (r["partition"], r["offset"]))
    print(json.dumps({
        "partitions": partitions,
        "createDuplicate": duplicate,
        "produced": [f"{p}:{o}" for p, o, _ in produced],
        "consumed": consumed,
        "committed": committed,
        "watermarks": watermarks,
    }))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # reported as JSON so the harness shows the client's own error
        print(json.dumps({"error": type(e).__name__, "message": str(e)}))
        sys.exit(1)
