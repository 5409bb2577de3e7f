package addons

import (
	"strings"
	"testing"

	"github.com/cka-lab/lab/internal/manifest"
)

func TestMetricsServerManifest(t *testing.T) {
	for _, insecure := range []bool{true, false} {
		m := MetricsServer("lab.local/metrics-server:abc", insecure)
		objs, err := manifest.Decode([]byte(m))
		if err != nil || len(objs) != 8 {
			t.Fatalf("MetricsServer decodes to %d objects, %v; want 8", len(objs), err)
		}
		if !strings.Contains(m, "image: lab.local/metrics-server:abc\n") || strings.Contains(m, "IMAGE\n") {
			t.Error("the image is not substituted")
		}
		if o, err := manifest.Decode([]byte(MetricsAPIService)); err != nil || len(o) != 1 || o[0].GetKind() != "APIService" {
			t.Errorf("MetricsAPIService: %v, %v", o, err)
		}
		if got := strings.Contains(m, "- --kubelet-insecure-tls\n"); got != insecure {
			t.Errorf("kubeletInsecureTLS %v: manifest has the flag: %v", insecure, got)
		}
	}
}

func TestGatewayAPIAndTraefikManifests(t *testing.T) {
	crds, err := manifest.Decode([]byte(GatewayAPICRDs()))
	if err != nil || len(crds) != 10 {
		t.Fatalf("GatewayAPICRDs decodes to %d objects, %v; want 10", len(crds), err)
	}
	for _, c := range crds {
		if c.GetKind() != "CustomResourceDefinition" || c.GetLabels()["gateway.networking.k8s.io/channel"] != "standard" && c.GetAnnotations()["gateway.networking.k8s.io/channel"] != "standard" {
			t.Errorf("%s %s is not a standard-channel CRD", c.GetKind(), c.GetName())
		}
	}
	objs, err := manifest.Decode([]byte(Traefik("lab.local/traefik:abc")))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, o := range objs {
		kinds[o.GetKind()] = true
	}
	for _, k := range []string{"Deployment", "Service", "GatewayClass", "IngressClass", "ClusterRole"} {
		if !kinds[k] {
			t.Errorf("the Traefik manifest has no %s", k)
		}
	}
}
