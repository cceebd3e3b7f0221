#!/usr/bin/env bash
# The container tooling for the image tests, as these machines need it (run as root): Debian's
# podman with runc and cgroupfs, no default ulimits, and — since no container registry is reachable
# here — a local stand-in for the Containerfile's base image (docker.io/library/node:20-bookworm-slim):
# a Debian bookworm root from debootstrap with this machine's Node 20 copied in, imported under
# that same name, so the Containerfile users see stays the standard one.
#   bash test/deploy/podman.sh setup   install the packages and make the base image (minutes, once),
#                                      and localhost/etcd:debian (Debian's etcd and etcdctl on that base)
#                                      for the Compose file's etcd service
#   bash test/deploy/podman.sh build   build the Fjord image as localhost/fjord:test
# Other arguments run podman itself with this configuration (bash test/deploy/podman.sh ps -a).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="$ROOT/.cache/deploy"
mkdir -p "$CACHE"
export CONTAINERS_CONF="$CACHE/containers.conf"
cat >"$CONTAINERS_CONF" <<'CONF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
BASE=docker.io/library/node:20-bookworm-slim
step() { printf '[deploy %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

setup() {
  local missing=""
  for p in podman buildah runc debootstrap podman-compose golang-github-containernetworking-plugin-dnsname etcd-server etcd-client; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    step "apt-get install$missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
  if podman image exists "$BASE"; then step "base image $BASE present"; else base_image; fi
  if podman image exists localhost/etcd:debian; then step "localhost/etcd:debian present"; else etcd_image; fi
}

etcd_image() {
  step "building localhost/etcd:debian"
  local ctx="$CACHE/etcd-image"
  rm -rf "$ctx" && mkdir -p "$ctx"
  cp /usr/bin/etcd /usr/bin/etcdctl "$ctx/"
  printf 'FROM %s\nCOPY etcd etcdctl /usr/local/bin/\nENTRYPOINT []\nCMD ["etcd"]\n' "$BASE" >"$ctx/Containerfile"
  podman build -q -t localhost/etcd:debian "$ctx" >/dev/null
  rm -rf "$ctx"
}

base_image() {
  local node major
  node="$(command -v node)"
  major="$("$node" -p 'process.versions.node.split(".")[0]')"
  [ "$major" = 20 ] || { echo "podman.sh: the base image needs Node 20 on this machine, found $("$node" --version)" >&2; exit 1; }
  local root="$CACHE/rootfs"
  rm -rf "$root"
  step "debootstrap bookworm (minbase)"
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$CACHE/debootstrap.log" 2>&1 \
    || { tail -n 30 "$CACHE/debootstrap.log" >&2; exit 1; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/locale/*
  # Node as the official image lays it out: /usr/local/{bin,lib/node_modules,include/node}.
  local prefix
  prefix="$(cd "$(dirname "$node")/.." && pwd)"
  mkdir -p "$root/usr/local/bin" "$root/usr/local/lib/node_modules" "$root/usr/local/include" "$root/usr/local/etc"
  cp "$node" "$root/usr/local/bin/node"
  cp -a "$prefix/lib/node_modules/npm" "$root/usr/local/lib/node_modules/"
  cp -a "$prefix/include/node" "$root/usr/local/include/"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  # This machine's certificate authorities for npm inside the build, as its own npm is set up.
  cp /etc/ssl/certs/ca-certificates.crt "$root/usr/local/etc/ca-bundle.crt"
  printf 'cafile=/usr/local/etc/ca-bundle.crt\n' >"$root/usr/local/etc/npmrc"
  step "importing the base as $BASE"
  tar -C "$root" -c . | podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' - "$BASE" >/dev/null 2>&1
  rm -rf "$root"
}

case "${1:-}" in
  setup) setup ;;
  build)
    step "podman build -t localhost/fjord:test"
    podman build --format docker --network=host -t localhost/fjord:test -f "$ROOT/Containerfile" "$ROOT" >"$CACHE/build.log" 2>&1 \
      || { tail -n 40 "$CACHE/build.log" >&2; exit 1; }
    step "built: $(podman image inspect localhost/fjord:test --format '{{.Size}}') bytes"
    ;;
  *) exec podman "$@" ;;
esac
