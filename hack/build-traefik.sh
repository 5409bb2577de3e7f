#!/usr/bin/env bash
# Builds Traefik (the Gateway API and Ingress controller of the gateway-api and ingress scenarios) statically from
# the Go module proxy, for machines without a registry: `hack/build-traefik.sh v3.7.13 bin/traefik-v3.7.13`.
# `go install traefik@version` refuses a module with replace directives, so this builds a copy of the module.
# Two departures from the release, both because of what the module proxy serves here:
#  - the module zip leaves out the nested module its go.mod replaces ./pkg/config/dynamic/ext with; its two
#    empty types are written back as they are upstream;
#  - the proxy refuses some exact dependency versions (403); each is replaced by the nearest version it serves.
#    All but one are DNS providers of ACME challenges; the other is the HTTP auth fork behind the basicAuth and
#    digestAuth middlewares, at the version Traefik v3.7.0-v3.7.9 shipped. None is used by the scenarios.
set -euo pipefail
version=$1 out=$(realpath -m "$2")
src=$(go mod download -json "github.com/traefik/traefik/v3@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -n "$src" ] || { echo "build-traefik: cannot download github.com/traefik/traefik/v3@$version" >&2; exit 1; }
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
cp -r "$src" "$work/src" && chmod -R u+w "$work/src" && cd "$work/src"
mkdir -p pkg/config/dynamic/ext
printf 'module github.com/traefik/traefik/dynamic/ext\n\ngo 1.26.0\n' > pkg/config/dynamic/ext/go.mod
printf 'package ext\n\n// HTTP is a dynamic.HTTP extension.\ntype HTTP struct{}\n\n// Router is a dynamic.Router extension.\ntype Router struct{}\n' > pkg/config/dynamic/ext/ext.go
go mod edit \
  -replace github.com/abbot/go-http-auth=github.com/containous/go-http-auth@v0.4.1-0.20200324110947-a37a7636d23e \
  -replace github.com/akamai/AkamaiOPEN-edgegrid-golang/v13=github.com/akamai/AkamaiOPEN-edgegrid-golang/v13@v13.3.0 \
  -replace github.com/huaweicloud/huaweicloud-sdk-go-v3=github.com/huaweicloud/huaweicloud-sdk-go-v3@v0.1.215 \
  -replace github.com/nrdcg/oci-go-sdk/common/v1065=github.com/nrdcg/oci-go-sdk/common/v1065@v1065.120.0 \
  -replace github.com/nrdcg/oci-go-sdk/dns/v1065=github.com/nrdcg/oci-go-sdk/dns/v1065@v1065.120.0 \
  -replace github.com/sacloud/sacloud-sdk-go=github.com/sacloud/sacloud-sdk-go@v0.2.0 \
  -replace github.com/ucloud/ucloud-sdk-go=github.com/ucloud/ucloud-sdk-go@v0.22.123 \
  -replace github.com/yandex-cloud/go-sdk/services/dns=github.com/yandex-cloud/go-sdk/services/dns@v0.0.96 \
  -replace github.com/yandex-cloud/go-sdk/v2=github.com/yandex-cloud/go-sdk/v2@v2.175.0
# Completes go.mod and go.sum for the replacements (their sums are checked against the checksum database).
GOFLAGS=-mod=mod go list -deps ./cmd/traefik >/dev/null
pkg=github.com/traefik/traefik/v3/pkg/version
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X $pkg.Version=$version -X $pkg.Codename=cheddar" -o "$out.tmp" ./cmd/traefik
mv "$out.tmp" "$out"
