package journey

import (
	"strings"
	"testing"
)

func TestStagesOrderAndCatalog(t *testing.T) {
	want := []Stage{Authentication, Authorization, Admission, Persistence, Controllers, Scheduling,
		Kubelet, Volumes, Sandbox, Init, Image, Container, App, Readiness,
		Service, NetworkPolicy, DNS, APIAccess}
	got := Stages()
	if strings.Join(stageNames(got), ",") != strings.Join(stageNames(want), ",") {
		t.Fatalf("Stages() = %v, want %v", got, want)
	}
	for i, s := range got {
		if s.Index() != i {
			t.Errorf("%s.Index() = %d, want %d", s, s.Index(), i)
		}
		if !strings.HasPrefix(squash(s.Title()), squash(string(s))) {
			t.Errorf("%s.Title() = %q does not start with the stage name", s, s.Title())
		}
		if len(s.Commands()) == 0 {
			t.Errorf("%s has no investigate commands", s)
		}
	}
	got[0] = "mutated"
	if Stages()[0] != Authentication {
		t.Error("Stages() exposes its backing array")
	}
}

func TestUnknownStage(t *testing.T) {
	s := Stage("bogus")
	if s.Index() != -1 || s.Title() != "bogus" || s.Commands() != nil {
		t.Errorf("unknown stage: Index %d, Title %q, Commands %v", s.Index(), s.Title(), s.Commands())
	}
}

func TestParseStage(t *testing.T) {
	tests := []struct {
		in   string
		want Stage
	}{
		{"scheduling", Scheduling},
		{"  Readiness ", Readiness},
		{"rbac", Authorization},
		{"cni", Sandbox},
		{"network", Sandbox},
		{"runtime", Sandbox},
		{"containerd", Sandbox},
		{"csi", Volumes},
		{"storage", Volumes},
		{"PVC", Volumes},
		{"image", Image},
		{"pull", Image},
		{"dns", DNS},
		{"coredns", DNS},
		{"kube-proxy", Service},
		{"netpol", NetworkPolicy},
		{"sa", APIAccess},
		{"etcd", Persistence},
		{"api", Persistence},
		{"scheduler", Scheduling},
	}
	for _, s := range Stages() {
		tests = append(tests, struct {
			in   string
			want Stage
		}{string(s), s})
	}
	for _, tc := range tests {
		got, err := ParseStage(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseStage(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestParseStageError(t *testing.T) {
	for _, in := range []string{"", "kube-scheduler", "init containers"} {
		_, err := ParseStage(in)
		if err == nil {
			t.Errorf("ParseStage(%q) succeeded, want an error", in)
			continue
		}
		for _, s := range Stages() {
			if !strings.Contains(err.Error(), string(s)) {
				t.Errorf("ParseStage(%q) error %q does not list %q", in, err, s)
			}
		}
	}
}

func stageNames(ss []Stage) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// squash compares a stage's name with its title: "api-access" and "API access" agree.
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, strings.ToLower(s))
}

func TestLegacy(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Stage
		ok   bool
	}{
		{"runtime", Image, true},
		{"network", Sandbox, true},
		{"storage", Volumes, true},
		{"service", Service, true},
		{"readiness", Readiness, true},
		{"retired-stage", "", false},
	} {
		got, ok := Legacy(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Legacy(%q) = %q, %t; want %q, %t", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
