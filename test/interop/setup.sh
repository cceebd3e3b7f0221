#!/usr/bin/env bash
# Installs what the interop suite needs on a fresh Debian machine (run as root), and reuses what an
# earlier run left in .cache/ so a second run takes seconds:
#   Debian packages (kcat, socat for the benchmark's raw pipe, chromium and prometheus for the status page and scrape tests, libfaketime for the fault suite's clock jump, python3-venv,
#   librdkafka build deps), the Apache Kafka broker and the Java
#   clients/tools and MirrorMaker 2 from Maven Central (.cache/m2), a virtualenv with confluent-kafka and kafka-python
#   from PyPI (.cache/venv), librdkafka's test runner built from the @confluentinc/kafka-javascript
#   npm tarball (.cache/librdkafka), and Fjord itself (npm run build).
# It only installs; run the suite afterwards with `npm run test:interop`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
CACHE="$ROOT/.cache"
OUT="$CACHE/interop"
M2="$CACHE/m2"
mkdir -p "$OUT"

# Versions: the 4.1 line the harness was proven on, and the newest 4.x Maven Central served then.
KAFKA_VERSIONS="${FJORD_INTEROP_KAFKA_VERSIONS:-4.1.2 4.4.0}"
CLIENTS_KAFKA_VERSION="4.1.2"
# Kafka Streams with the streams rebalance protocol (KIP-1071) and its kafka-streams-groups tool.
STREAMS_KAFKA_VERSION="4.4.0"
CONFLUENT_KAFKA_PY="2.16.1"
KAFKA_PYTHON="3.0.12"
KAFKA_JAVASCRIPT="1.10.1"
# franz-go (Go), whose own kgo integration tests run against both brokers (test/interop/franz-go.test.ts).
FRANZ_GO="v1.22.3"

step() { printf '[setup %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
# Runs a command with its output in a log file; on failure shows the log's tail and stops.
logged() {
  local log="$1"; shift
  "$@" >"$log" 2>&1 || { echo "setup: failed: $*" >&2; tail -n 40 "$log" >&2; exit 1; }
}

# --- Debian packages ------------------------------------------------------------------------------
APT_PACKAGES="kcat socat bsdutils chromium prometheus openssl python3-venv build-essential pkg-config zlib1g-dev libssl-dev libzstd-dev liblz4-dev libsasl2-dev libcurl4-openssl-dev etcd-server libfaketime"
missing=""
for p in $APT_PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  step "apt-get install$missing"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
  step "Debian packages present"
fi
command -v java >/dev/null || { echo "setup: java (JDK 17) is required" >&2; exit 1; }
command -v mvn >/dev/null || { echo "setup: mvn (Maven 3.8) is required" >&2; exit 1; }

# --- Apache Kafka broker classpaths ---------------------------------------------------------------
MVN=(mvn -B -q "-Dmaven.repo.local=$M2")
BROKER_STAMP="$(sha256sum test/interop/java/broker/pom.xml | cut -c1-16)"
for v in $KAFKA_VERSIONS; do
  if [ ! -s "$OUT/kafka-$v.classpath" ] || [ "$(cat "$OUT/kafka-$v.stamp" 2>/dev/null)" != "$BROKER_STAMP" ]; then
    step "resolving org.apache.kafka:kafka_2.13:$v"
    logged "$OUT/mvn-kafka-$v.log" "${MVN[@]}" -f test/interop/java/broker/pom.xml "-Dkafka.version=$v" \
      dependency:build-classpath "-Dmdep.outputFile=$OUT/kafka-$v.classpath.tmp"
    mv "$OUT/kafka-$v.classpath.tmp" "$OUT/kafka-$v.classpath"
    echo "$BROKER_STAMP" > "$OUT/kafka-$v.stamp"
  fi
done
step "Kafka broker classpaths: $KAFKA_VERSIONS"

# --- MirrorMaker 2 (connect-mirror), the peer bench/compare measures the mirror against -----------
MM2_STAMP="$(sha256sum test/interop/java/mirror-maker/pom.xml | cut -c1-16)"
if [ ! -s "$OUT/mirror-maker-$CLIENTS_KAFKA_VERSION.classpath" ] || [ "$(cat "$OUT/mirror-maker.stamp" 2>/dev/null)" != "$MM2_STAMP" ]; then
  step "resolving org.apache.kafka:connect-mirror:$CLIENTS_KAFKA_VERSION"
  logged "$OUT/mvn-mirror-maker.log" "${MVN[@]}" -f test/interop/java/mirror-maker/pom.xml "-Dkafka.version=$CLIENTS_KAFKA_VERSION" \
    dependency:build-classpath "-Dmdep.outputFile=$OUT/mirror-maker-$CLIENTS_KAFKA_VERSION.classpath.tmp"
  mv "$OUT/mirror-maker-$CLIENTS_KAFKA_VERSION.classpath.tmp" "$OUT/mirror-maker-$CLIENTS_KAFKA_VERSION.classpath"
  echo "$MM2_STAMP" > "$OUT/mirror-maker.stamp"
fi
step "MirrorMaker 2 classpath: $CLIENTS_KAFKA_VERSION"

# --- Java scenarios + stock tools -----------------------------------------------------------------
JAR="$OUT/java-scenarios-target/java-scenarios-1.jar"
SRC_STAMP="$(cat test/interop/java/clients/pom.xml test/interop/java/clients/src/main/java/fjord/interop/*.java | sha256sum | cut -c1-16)"
if [ ! -s "$JAR" ] || [ "$(cat "$OUT/java-scenarios.stamp" 2>/dev/null)" != "$SRC_STAMP" ]; then
  step "building the Java scenario program (kafka-clients/kafka-tools $CLIENTS_KAFKA_VERSION)"
  logged "$OUT/mvn-java-scenarios.log" "${MVN[@]}" -f test/interop/java/clients/pom.xml \
    "-Dkafka.version=$CLIENTS_KAFKA_VERSION" package dependency:build-classpath \
    "-Dmdep.outputFile=$OUT/java-scenarios.classpath"
  echo "$SRC_STAMP" > "$OUT/java-scenarios.stamp"
fi
step "Java scenarios: $JAR"

# The Kafka Streams scenario (kafka-streams + kafka-tools $STREAMS_KAFKA_VERSION: group.protocol=streams).
STREAMS_JAR="$OUT/streams-scenarios-target/streams-scenarios-1.jar"
STREAMS_STAMP="$(cat test/interop/java/streams/pom.xml test/interop/java/streams/src/main/java/fjord/interop/streams/*.java | sha256sum | cut -c1-16)"
if [ ! -s "$STREAMS_JAR" ] || [ "$(cat "$OUT/streams-scenarios.stamp" 2>/dev/null)" != "$STREAMS_STAMP" ]; then
  step "building the Kafka Streams scenario (kafka-streams/kafka-tools $STREAMS_KAFKA_VERSION)"
  logged "$OUT/mvn-streams-scenarios.log" "${MVN[@]}" -f test/interop/java/streams/pom.xml \
    "-Dkafka.version=$STREAMS_KAFKA_VERSION" package dependency:build-classpath \
    "-Dmdep.outputFile=$OUT/streams-scenarios.classpath"
  echo "$STREAMS_STAMP" > "$OUT/streams-scenarios.stamp"
fi
step "Kafka Streams scenario: $STREAMS_JAR"

# --- Python clients -------------------------------------------------------------------------------
VENV="$CACHE/venv"
PY_STAMP="confluent-kafka==$CONFLUENT_KAFKA_PY kafka-python==$KAFKA_PYTHON"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.fjord-stamp" 2>/dev/null)" != "$PY_STAMP" ]; then
  step "virtualenv with $PY_STAMP"
  rm -rf "$VENV"
  /usr/bin/python3 -m venv "$VENV"
  logged "$OUT/pip.log" "$VENV/bin/pip" install --disable-pip-version-check $PY_STAMP
  echo "$PY_STAMP" > "$VENV/.fjord-stamp"
fi
step "Python: $("$VENV/bin/python" -c 'import confluent_kafka, kafka; print("confluent-kafka", confluent_kafka.__version__, "librdkafka", confluent_kafka.libversion()[0], "kafka-python", kafka.__version__)')"

# --- librdkafka test runner -----------------------------------------------------------------------
LRK="$CACHE/librdkafka"
LRK_TREE="$LRK/package/deps/librdkafka"
if [ ! -x "$LRK_TREE/tests/test-runner" ]; then
  step "building librdkafka's test runner from @confluentinc/kafka-javascript@$KAFKA_JAVASCRIPT"
  rm -rf "$LRK" && mkdir -p "$LRK"
  (cd "$LRK" && npm pack --silent "@confluentinc/kafka-javascript@$KAFKA_JAVASCRIPT" >/dev/null \
    && tar xzf "confluentinc-kafka-javascript-$KAFKA_JAVASCRIPT.tgz" package/deps/librdkafka)
  (cd "$LRK_TREE" && ./configure --disable-gssapi >"$LRK/configure.log" 2>&1 \
    && make -j2 libs >"$LRK/make-libs.log" 2>&1 && make -C tests -j2 build >"$LRK/make-tests.log" 2>&1) \
    || { echo "setup: librdkafka build failed, see $LRK/*.log" >&2; exit 1; }
fi
step "librdkafka test runner: $LRK_TREE/tests/test-runner"

# --- franz-go's own integration tests ------------------------------------------------------------
# The module as the Go module proxy serves it (its tests ship with it), compiled once into a test
# binary; KGO_SEEDS points it at a broker.
FRANZ="$CACHE/franz-go"
if [ ! -x "$FRANZ/kgo-$FRANZ_GO.test" ] || [ ! -d "$FRANZ/src/pkg/kgo" ]; then
  command -v go >/dev/null || { echo "setup: go is required for franz-go's tests" >&2; exit 1; }
  step "building franz-go $FRANZ_GO's kgo test binary"
  mkdir -p "$FRANZ"
  logged "$FRANZ/download.log" env GOPATH="$FRANZ/gopath" GOFLAGS=-mod=mod go mod download -json "github.com/twmb/franz-go@$FRANZ_GO"
  rm -rf "$FRANZ/src" && cp -r "$FRANZ/gopath/pkg/mod/github.com/twmb/franz-go@$FRANZ_GO" "$FRANZ/src" && chmod -R u+w "$FRANZ/src"
  (cd "$FRANZ/src" && GOPATH="$FRANZ/gopath" GOFLAGS=-mod=mod go test -c -o "$FRANZ/kgo-$FRANZ_GO.test" ./pkg/kgo >"$FRANZ/build.log" 2>&1) \
    || { echo "setup: franz-go test build failed, see $FRANZ/build.log" >&2; tail -n 20 "$FRANZ/build.log" >&2; exit 1; }
fi
step "franz-go tests: $FRANZ/kgo-$FRANZ_GO.test"

# --- Fjord ----------------------------------------------------------------------------------------
# Not fatal: tsc emits dist/ even with type errors in files in progress, and without dist/ the suite
# reports every Fjord scenario as failing to start.
# The stamp (dated when the build started) tells the tests' ensureBuilt that dist/ is current.
BUILD_STARTED="$(date +%s.%N)"
if npm run -s build >"$OUT/fjord-build.log" 2>&1; then
  echo "$BUILD_STARTED" > dist/.build-stamp && touch -d "@$BUILD_STARTED" dist/.build-stamp
  step "Fjord built"
elif [ -f dist/cli/main.js ]; then
  step "Fjord compiled with type errors, dist/ emitted (see $OUT/fjord-build.log)"
else
  step "Fjord build failed (see $OUT/fjord-build.log)"
fi
step "done"
