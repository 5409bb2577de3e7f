#!/usr/bin/env bash
# doctor-problems.sh — show `lab doctor` on problems made on purpose, without changing this machine: Docker
# unreachable (DOCKER_HOST names a socket nothing listens on) and inotify limits below kind's (LAB_PROC_SYS, a
# hook for tests, points lab at a fake /proc/sys). doctor must name each problem with its fix and exit 1.
# LAB=path/to/lab tests that binary instead of building bin/lab.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ -z ${LAB:-} ]]; then
  make -s build >&2
  LAB=bin/lab
fi
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
mkdir -p "$fake/fs/inotify"
echo 128 >"$fake/fs/inotify/max_user_instances"
echo 8192 >"$fake/fs/inotify/max_user_watches"

echo "\$ DOCKER_HOST=unix://$fake/no-docker.sock LAB_PROC_SYS=$fake lab doctor"
rc=0
out=$(DOCKER_HOST=unix://$fake/no-docker.sock LAB_PROC_SYS=$fake NO_COLOR=1 "$LAB" doctor) || rc=$?
echo "$out"
echo "(exit $rc)"

fail() { echo "doctor-problems: FAIL: $*" >&2; exit 1; }
[[ $rc == 1 ]] || fail "want exit 1, got $rc"
for want in \
  "✗ no Docker daemon answers at DOCKER_HOST=unix://$fake/no-docker.sock" \
  "    fix: unset DOCKER_HOST" \
  "✗ fs.inotify.max_user_instances is 128 (kind recommends 512), fs.inotify.max_user_watches is 8192 (kind recommends 524288)" \
  "    fix: sudo sysctl -w fs.inotify.max_user_instances=512 fs.inotify.max_user_watches=524288" \
  "· free disk in Docker's data root: not checked, Docker is not reachable"; do
  grep -qF -- "$want" <<<"$out" || fail "no line with: $want"
done
echo "doctor-problems: ok, both problems reported with their fix"
