#!/usr/bin/env bash
# e2e-costs.sh — records the wall time of every scenario spec that passed in the given JUnit reports (by
# default the newest run under bin/e2e/) into e2e/rotation/costs.json, which the rotation splits the extras by.
# Commit the file after a clean run, best after `make e2e-all`, which times every spec.
#   hack/e2e-costs.sh [JUNIT.xml ...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if (( $# == 0 )); then
  newest=$(ls -1d bin/e2e/*/ 2>/dev/null | sort | tail -1)
  [[ -n $newest && -f ${newest}junit.xml ]] || { echo "e2e-costs: no report under bin/e2e/: name the JUnit reports to read" >&2; exit 2; }
  set -- "${newest}junit.xml"
fi
go run ./e2e/rotation/cmd costs "$@"
go run ./e2e/rotation/cmd plan
