"""confluent-kafka (librdkafka) producing and consuming while the cluster loses a node.

Usage: cluster_failover.py BOOTSTRAP TOPIC GROUP [PACE_MS]

An idempotent acks=all producer sends the values 0, 1, 2, ... to TOPIC at a steady pace and a
consumer in GROUP reads them and commits. Every 200 ms a progress line
{"progress": true, "acked": N, "consumed": M, "maxConsumed": V} goes to stdout. After "stop" on
stdin (or stdin closed) it stops producing, flushes, waits until the consumer has seen every
acknowledged value, commits, and prints {"acked": [...], "consumed": [...], "errors": [...],
"consumerErrors": [...]} as its last line (errors: failed deliveries).
"""
import json
import sys
import threading
import time


def commit(consumer, asynchronous):
    from confluent_kafka import KafkaException
    try:
        consumer.commit(asynchronous=asynchronous)
    except KafkaException:
        pass  # nothing consumed since the last commit, or no assignment yet


def main(bootstrap, topic, group, pace_ms):
    from confluent_kafka import Consumer, KafkaError, Producer

    stop = threading.Event()

    def read_stdin():
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        stop.set()

    threading.Thread(target=read_stdin, daemon=True).start()

    common = {
        "bootstrap.servers": bootstrap,
        "socket.connection.setup.timeout.ms": 2000,
        "topic.metadata.refresh.interval.ms": 2000,
        "reconnect.backoff.max.ms": 1000,
    }
    acked, errors, consumer_errors, consumed, seen = [], [], [], [], set()

    def on_delivery(err, msg):
        if err is not None:
            errors.append(f"{msg.value().decode()}:{err.name()}")
        else:
            acked.append(int(msg.value()))

    # Long enough to ride out a leader's loss (one broker session timeout plus an election).
    producer = Producer({**common, "enable.idempotence": True, "acks": "all", "linger.ms": 2,
                         "message.timeout.ms": 60000, "request.timeout.ms": 10000})
    consumer = Consumer({**common, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "session.timeout.ms": 10000,
                         "heartbeat.interval.ms": 1000})
    consumer.subscribe([topic])

    seq = 0
    next_send = time.monotonic()
    last_progress = 0.0
    drain_deadline = None
    while True:
        now = time.monotonic()
        if not stop.is_set():
            while next_send <= now:
                producer.produce(topic, value=str(seq).encode(), on_delivery=on_delivery)
                seq += 1
                next_send += pace_ms / 1000
        producer.poll(0)
        for m in consumer.consume(num_messages=500, timeout=0.05):
            if m.error():
                # Transient consumer errors (a broker gone, a coordinator moving) are librdkafka's
                # to retry; what counts is that every acknowledged value is consumed in the end.
                if m.error().code() != KafkaError._PARTITION_EOF:
                    consumer_errors.append(m.error().name())
                continue
            v = int(m.value())
            consumed.append(v)
            seen.add(v)
        if now - last_progress >= 0.2:
            last_progress = now
            commit(consumer, asynchronous=True)
            print(json.dumps({"progress": True, "acked": len(acked), "consumed": len(consumed),
                              "maxConsumed": max(seen) if seen else -1}), flush=True)
        if stop.is_set():
            if drain_deadline is None:
                producer.flush(70)
                drain_deadline = time.monotonic() + 30
            if seen.issuperset(acked) or time.monotonic() > drain_deadline:
                break
    commit(consumer, asynchronous=False)
    consumer.close()
    print(json.dumps({"acked": sorted(acked), "consumed": consumed, "errors": errors,
                      "consumerErrors": consumer_errors}), flush=True)


if __name__ == "__main__":
    try:
        main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]) if len(sys.argv) > 4 else 5.0)
    except Exception as e:  # reported to the harness as the last JSON line
        print(json.dumps({"error": type(e).__name__, "message": str(e)}), flush=True)
        sys.exit(1)
