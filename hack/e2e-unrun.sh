#!/usr/bin/env bash
# e2e-unrun.sh — which extras no run has proved: reads the JUnit reports of several e2e runs (by default every
# run under bin/e2e/) against the catalogue, lists each extra that none ran to a verdict and each that failed in
# one, and exits 1 while any is unrun. Any K consecutive runs of one rotation plan leave none.
#   hack/e2e-unrun.sh [JUNIT.xml ...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if (( $# == 0 )); then
  shopt -s nullglob
  set -- bin/e2e/*/junit.xml
  (( $# > 0 )) || { echo "e2e-unrun: no reports under bin/e2e/: name the JUnit reports to read" >&2; exit 2; }
fi
exec go run ./e2e/rotation/cmd unrun "$@"
