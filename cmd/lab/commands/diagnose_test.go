package commands

import (
	"testing"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/scenarios"
)

func instanceWith(stage journey.Stage, object string) *scenarios.Instance {
	return &scenarios.Instance{Scenario: &scenarios.Scenario{Stage: stage, Diagnosis: scenarios.Diagnosis{Object: object}}}
}

func TestDiagnosisCorrect(t *testing.T) {
	inst := instanceWith("image", "deployment/web")
	for _, tc := range []struct {
		args    []string
		correct bool
	}{
		{[]string{"image"}, true},
		{[]string{"pull"}, true},
		{[]string{"Image", "deploy/web"}, true},
		{[]string{"image", "deploy/api"}, false},
		{[]string{"runtime"}, false},
		{[]string{"scheduling"}, false},
		{[]string{"scheduling", "deploy/web"}, false},
	} {
		o := &diagnoseOptions{}
		if err := o.complete(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := o.correct(inst); got != tc.correct {
			t.Errorf("diagnose %v: correct=%t, want %t", tc.args, got, tc.correct)
		}
	}
}

func TestDiagnoseRejectsBadInput(t *testing.T) {
	for _, args := range [][]string{{"nowhere"}, {"runtime", "web"}, {"runtime", "deploy/"}} {
		if err := (&diagnoseOptions{}).complete(args); err == nil {
			t.Errorf("diagnose %v: want an error", args)
		}
	}
}
