// Package addons holds the manifests of the cluster add-ons lab installs when a scenario needs one, as their
// projects publish them.
package addons

import (
	_ "embed"
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
