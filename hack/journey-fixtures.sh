#!/usr/bin/env bash
# journey-fixtures.sh — record what a real cluster makes of workloads broken by hand, for the unit tests of
# internal/journey/evidence: creates internal/journey/evidence/testdata/broken.yaml in namespace shop of the
# lab cluster KUBECONFIG points at, waits until every fault shows (a rollout's deadline included), and writes
# the namespace's objects to testdata/shop.yaml and the cluster's (nodes, namespaces, kube-system's DNS and
# kube-proxy) to testdata/cluster.yaml; then scales CoreDNS to 0, records the cluster's again to
# testdata/dns-down.yaml, and scales it back. Run it on a lab cluster of your own: it changes the cluster (and deletes namespace shop at the end).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DATA=$HERE/../internal/journey/evidence/testdata
: "${KUBECONFIG:?point KUBECONFIG at a lab cluster of your own}"
k() { kubectl "$@"; }

k create -f "$DATA/broken.yaml"
k -n shop rollout status deploy/rollout --timeout=90s
# The rollout's second revision never gets Ready (maxUnavailable 0): the old Pods keep serving.
k -n shop patch deploy rollout --type=json \
  -p '[{"op":"replace","path":"/spec/template/spec/containers/0/readinessProbe/httpGet/path","value":"/ready"}]'
k -n shop wait deploy/rollout --for=jsonpath='{.status.conditions[?(@.type=="Progressing")].reason}'=ProgressDeadlineExceeded --timeout=120s
k -n shop wait pod -l app=reporter --for=condition=Ready --timeout=60s
sleep 15 # the reporter's first refused request, the liveness kills and the image pull back-offs

strip() { yq -y 'del(.items[].metadata.managedFields)'; }
cluster() {
  k get nodes,namespaces -o yaml | strip
  echo ---
  k -n kube-system get services,endpointslices -l k8s-app=kube-dns -o yaml | strip
  echo ---
  k -n kube-system get pods -l 'k8s-app in (kube-dns,kube-proxy)' -o yaml | strip
}
k -n shop get pods,events,deployments,replicasets,statefulsets,daemonsets,jobs,services,endpointslices,networkpolicies,persistentvolumeclaims -o yaml |
  strip >"$DATA/shop.yaml"
cluster >"$DATA/cluster.yaml"

k -n kube-system scale deploy/coredns --replicas=0
k -n kube-system wait pod -l k8s-app=kube-dns --for=delete --timeout=60s
cluster >"$DATA/dns-down.yaml"
k -n kube-system scale deploy/coredns --replicas=2
k -n kube-system rollout status deploy/coredns --timeout=90s
k delete namespace shop --wait=false
