#!/usr/bin/env bash
# prereqs.sh — make this machine able to run lab and its tests: Docker's engine running, the kind node image
# and the workload images in the local Docker, and kubectl. Idempotent; prints what it does.
#
# With a registry (a normal machine): checks Docker, pulls the images that are missing.
# Without one (this project's build machines): ../shared/kind-offline/up.sh installs Docker from Debian, starts
# dockerd, prepares the host and builds every image offline (cached in /var/cache/kind-offline).
# Prints the directory of kubectl last, for the Makefile to put on PATH.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KIND_OFFLINE=${KIND_OFFLINE:-$(cd "$HERE/../.." && pwd)/shared/kind-offline}
NODE_IMAGE=${LAB_NODE_IMAGE:-kindest/node:v1.35.4}
K8S_VERSION=${NODE_IMAGE##*:}
IMAGES=("$NODE_IMAGE" nginx:1.27 busybox:1.36)
log() { echo "prereqs: $*" >&2; }

have_images() {
  for i in "${IMAGES[@]}"; do docker image inspect "$i" >/dev/null 2>&1 || return 1; done
}

if [[ -x $KIND_OFFLINE/up.sh && $(id -u) == 0 ]] && ! { docker info >/dev/null 2>&1 && have_images && [[ -x /var/cache/kind-offline/out/k8s-$K8S_VERSION/kubectl ]]; }; then
  log "building what is missing offline with $KIND_OFFLINE/up.sh (first run: 40-60 min; then seconds)"
  "$KIND_OFFLINE/up.sh" >&2
elif [[ -x $KIND_OFFLINE/host-prep.sh && $(id -u) == 0 ]]; then
  docker info >/dev/null 2>&1 || { log "starting dockerd"; (setsid dockerd >/var/log/dockerd-lab.log 2>&1 &); for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done; }
  "$KIND_OFFLINE/host-prep.sh" >&2
fi

# The workshop scoreboard's unit test drives a real browser.
if [[ ! -x /usr/bin/chromium && $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
  log "installing chromium (the scoreboard's browser test)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

# A docker CLI alone (some images ship one) cannot start an engine: install it then too.
if ! command -v docker >/dev/null || { ! docker info >/dev/null 2>&1 && ! command -v dockerd >/dev/null; }; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    log "installing docker.io"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >&2
  else
    log "install Docker Engine first (https://docs.docker.com/engine/install/)"; exit 1
  fi
fi
if ! docker info >/dev/null 2>&1; then
  [[ $(id -u) == 0 ]] || { log "start the Docker daemon first (sudo systemctl start docker)"; exit 1; }
  log "starting dockerd"; (setsid dockerd >/var/log/dockerd-lab.log 2>&1 &)
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { log "dockerd did not start; see /var/log/dockerd-lab.log"; exit 1; }
fi
# Every kind node on the machine draws on root's inotify budget; kind documents these values for several
# clusters (the tests run two, `lab bench` counts how many fit).
if [[ $(id -u) == 0 ]]; then
  for kv in fs.inotify.max_user_instances=512 fs.inotify.max_user_watches=524288; do
    k=${kv%=*} v=${kv#*=}
    (( $(sysctl -n "$k") >= v )) || { log "raising $k to $v"; sysctl -qw "$kv" >&2 || log "could not raise $k"; }
  done
fi
for i in "${IMAGES[@]}"; do
  docker image inspect "$i" >/dev/null 2>&1 && continue
  log "pulling $i"; docker pull -q "$i" >&2 || { log "cannot get $i: no registry answers and no offline build ($KIND_OFFLINE)"; exit 1; }
done

if command -v kubectl >/dev/null; then
  dirname "$(command -v kubectl)"
elif [[ -x /var/cache/kind-offline/out/k8s-$K8S_VERSION/kubectl ]]; then
  echo "/var/cache/kind-offline/out/k8s-$K8S_VERSION"
else
  log "kubectl not found: install it (https://kubernetes.io/docs/tasks/tools/)"; exit 1
fi
