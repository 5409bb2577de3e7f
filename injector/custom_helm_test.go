package injector

import (
	"strings"
	"testing"

	"github.com/cka-lab/lab/internal/tools"
	"github.com/cka-lab/lab/scenarios"
)

func TestPreflightWantsHelmOnlyWhereAFaultInstallsIt(t *testing.T) {
	t.Setenv(tools.HelmEnv, "/nonexistent/helm")
	plain := []scenarios.Fault{{Custom: &scenarios.CustomFault{Custom: scenarios.Custom{Func: "sysctl"}}}}
	if err := Preflight(t.Context(), plain); err != nil {
		t.Errorf("a scenario without Helm failed its preflight: %v", err)
	}
	withHelm := append(plain, scenarios.Fault{Custom: &scenarios.CustomFault{Custom: scenarios.Custom{Func: "installHelm"}}})
	if err := Preflight(t.Context(), withHelm); err == nil {
		t.Error("a scenario that installs Helm passed its preflight without a helm binary")
	}
	t.Setenv(tools.MetricsServerEnv, "/nonexistent/metrics-server")
	withMetrics := append(plain, scenarios.Fault{Custom: &scenarios.CustomFault{Custom: scenarios.Custom{Func: "installMetricsServer"}}})
	if err := Preflight(t.Context(), withMetrics); err == nil || !strings.Contains(err.Error(), "make metrics-server") {
		t.Errorf("a scenario that installs metrics-server passed its preflight with a missing binary: %v", err)
	}
}
