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
