package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuiltinCatalogParses(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatalf("catalogue: %v", err)
	}
	if len(c.IDs()) == 0 {
		t.Fatal("empty catalogue")
	}
}

type fakeResolver struct{}

func (fakeResolver) Nodes(role string) ([]string, error) {
	if role == "worker" {
		return []string{"lab-worker", "lab-worker2"}, nil
	}
	return []string{"lab-control-plane"}, nil
}
func (fakeResolver) CNIConfig(node string) (string, error) {
	return "/etc/cni/net.d/10-x.conflist", nil
}
func (fakeResolver) CNIPlugin(node string) (string, error) { return "/opt/cni/bin/bridge", nil }
func (fakeResolver) Builtin(name string) string            { return "builtin-" + name }

func TestInstantiateIsDeterministic(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.All() {
		a, err := s.Instantiate(42, fakeResolver{})
		if err != nil {
			t.Fatalf("%s: %v", s.ID, err)
		}
		b, _ := s.Instantiate(42, fakeResolver{})
		if string(a.Source) != string(b.Source) {
			t.Errorf("%s: same seed, different instances", s.ID)
		}
		if strings.Contains(string(a.Source), "${") {
			t.Errorf("%s: unsubstituted var left", s.ID)
		}
	}
}

func TestSeedsVary(t *testing.T) {
	c, _ := Builtin()
	s, err := c.Get("taint-dedicated-node")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for seed := int64(0); seed < 20; seed++ {
		v, err := s.Choose(seed, fakeResolver{})
		if err != nil {
			t.Fatal(err)
		}
		seen[v["ns"]+v["key"]+v["node"]] = true
	}
	if len(seen) < 5 {
		t.Errorf("20 seeds gave only %d variants", len(seen))
	}
}

func TestErrorsNameFileLineAndField(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown field", "id: abc\ntitel: x\n", "x.yaml:2: titel: unknown field in Scenario"},
		{"bad stage", "id: x-y\nstage: kubeletz\n", "x.yaml:2: stage: unknown stage"},
		{"nested unknown", "id: abc\nchecks:\n  - name: a\n    points: 1\n    podsReddy: {}\n", "x.yaml:5: podsReddy: unknown field in Check"},
		{"two kinds", "id: abc\nfaults:\n  - cordon: {node: a}\n    taint: {node: a}\n", "x.yaml:3: faults: each fault needs exactly one kind"},
		{"undeclared var", "id: abc\ntask: |\n  hello ${nope}\n", "x.yaml:3: ${nope}: undeclared variable"},
		{"bad duration", "id: abc\ntimeLimit: 5 minutes\n", "x.yaml:2: invalid duration"},
		{"syntax", "id: abc\n  bad: [\n", "x.yaml:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("scenarios/catalog/x.yaml", []byte(c.yaml))
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("want Errors, got %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

func TestUnknownIDSuggests(t *testing.T) {
	c, _ := Builtin()
	_, err := c.Get("taint-dedicated")
	if err == nil || !strings.Contains(err.Error(), "did you mean taint-dedicated-node") {
		t.Errorf("got %v", err)
	}
}

func TestParseFilesCollectsEveryFilesProblems(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("catalog/bad-image-tag.yaml")
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{filepath.Join(dir, "bad-image-tag.yaml"), filepath.Join(dir, "broken.yaml")}
	if err := os.WriteFile(paths[0], good, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paths[1], []byte("id: broken\nstage: nowhere\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	scs, problems, err := ParseFiles(paths)
	if err != nil || len(scs) != 1 || scs[0].ID != "bad-image-tag" {
		t.Fatalf("parsed %d scenario(s), %v", len(scs), err)
	}
	if len(problems) == 0 || !strings.Contains(problems.Error(), "broken.yaml") {
		t.Errorf("problems: %v", problems)
	}
	if _, _, err := ParseFiles([]string{filepath.Join(dir, "missing.yaml")}); err == nil {
		t.Error("a missing file is an error")
	}
}

func TestCheckNamesDifferAcrossChecksAndCollateral(t *testing.T) {
	cat, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s := *cat.All()[0]
	s.Collateral = append(slices.Clone(s.Collateral), s.Checks[0])
	if errs := s.Validate(); !strings.Contains(errs.Error(), "names must differ across checks and collateral") {
		t.Errorf("a collateral check named like a task check passed validation: %v", errs)
	}
}

func TestLintAcceptsObjectsTheLearnerBuilds(t *testing.T) {
	high := ObjectRef{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass", Name: "high"}
	ten := "10"
	s := &Scenario{ID: "pc", Checks: []Check{{Name: "value", Points: 1, Field: &FieldCheck{Object: high, Path: "{.value}", Equals: &ten}}}}
	none := func(string) bool { return true }
	if errs := Lint(s, none, none); len(errs) == 0 || !strings.Contains(errs.Error(), "never create") || s.Kind() != "repair" {
		t.Errorf("a check of an object nobody creates passed lint: %v (kind %s)", errs, s.Kind())
	}
	s.Builds = []ObjectRef{high}
	if errs := Lint(s, none, none); len(errs) != 0 || s.Kind() != "build" {
		t.Errorf("a check of an object the learner builds: %v (kind %s)", errs, s.Kind())
	}
}

func TestLintAcceptsTheStorageClassEveryLabClusterHas(t *testing.T) {
	sc := func(name string) *Scenario {
		ref := ObjectRef{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass", Name: name}
		return &Scenario{ID: "sc", Checks: []Check{{Name: "provisioner", Points: 1, Field: &FieldCheck{Object: ref, Path: "{.provisioner}"}}}}
	}
	none := func(string) bool { return true }
	if errs := Lint(sc("standard"), none, none); len(errs) != 0 {
		t.Errorf("kind's StorageClass standard: %v", errs)
	}
	if errs := Lint(sc("fast"), none, none); len(errs) == 0 {
		t.Error("a StorageClass nobody creates passed lint")
	}
}
