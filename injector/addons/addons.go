// Package addons holds the manifests of the cluster add-ons lab installs when a scenario needs one, as their
// projects publish them.
package addons

import (
	"embed"
	"io/fs"
	"strings"

	"github.com/cka-lab/lab/internal/tools"
)

//go:embed metrics-server.yaml
var metricsServer string

// MetricsAPIService registers metrics-server's API with the API server's aggregator.
//
//go:embed metrics-apiservice.yaml
var MetricsAPIService string

// MetricsServerImage is the upstream image, pulled where a registry answers.
const MetricsServerImage = "registry.k8s.io/metrics-server/metrics-server:" + tools.MetricsServerVersion

// MetricsServer is metrics-server's manifest (without its APIService) running image; without kubeletInsecureTLS it is the release's
// manifest as it is, which cannot verify a kind kubelet's self-signed serving certificate.
func MetricsServer(image string, kubeletInsecureTLS bool) string {
	m := strings.Replace(metricsServer, "image: IMAGE", "image: "+image, 1)
	if !kubeletInsecureTLS {
		m = strings.Replace(m, "        - --kubelet-insecure-tls\n", "", 1)
	}
	return m
}

//go:embed gateway-api/*.yaml
var gatewayAPI embed.FS

// GatewayAPICRDs are the standard channel's CustomResourceDefinitions of Gateway API v1.6.3, as its release
// publishes them (config/crd/standard of sigs.k8s.io/gateway-api), one manifest.
func GatewayAPICRDs() string {
	files, _ := fs.Glob(gatewayAPI, "gateway-api/*.yaml")
	docs := make([]string, 0, len(files))
	for _, f := range files {
		b, _ := gatewayAPI.ReadFile(f)
		docs = append(docs, string(b))
	}
	return strings.Join(docs, "\n---\n")
}

//go:embed traefik.yaml
var traefik string

// TraefikImage is the upstream image, pulled where a registry answers.
const TraefikImage = "docker.io/library/traefik:" + tools.TraefikVersion

// Traefik is the Traefik controller's manifest running image, with its GatewayClass and IngressClass.
func Traefik(image string) string {
	return strings.Replace(traefik, "image: IMAGE", "image: "+image, 1)
}
