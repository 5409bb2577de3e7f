package injector

import (
	"testing"

	"github.com/cka-lab/lab/internal/tools"
	"github.com/cka-lab/lab/scenarios"
)

func TestPreflightWantsHelmOnlyWhereAFaultInstallsIt(t *testing.T) {
	t.Setenv(tools.HelmEnv, "/nonexistent/helm")
	plain := []scenarios.Fault{{Custom: &scenarios.Custom{Func: "sysctl"}}}
	if err := Preflight(plain); err != nil {
		t.Errorf("a scenario without Helm failed its preflight: %v", err)
	}
	withHelm := append(plain, scenarios.Fault{Custom: &scenarios.Custom{Func: "installHelm"}})
	if err := Preflight(withHelm); err == nil {
		t.Error("a scenario that installs Helm passed its preflight without a helm binary")
	}
}
