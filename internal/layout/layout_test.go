package layout

import (
	"context"
	"os"
	"strings"
	"testing"
)

func packages(t *testing.T) []Package {
	t.Helper()
	pkgs, err := List(context.Background(), "../..")
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestLayoutAndDependencies fails when a package sits outside the card's folders or a dependency runs the
// wrong way.
func TestLayoutAndDependencies(t *testing.T) {
	for _, v := range Violations(packages(t)) {
		t.Error(v)
	}
}

func TestViolationsCatchWrongEdges(t *testing.T) {
	pkgs := []Package{
		{ImportPath: Module + "/grader", Deps: []string{Module + "/injector"}},
		{ImportPath: Module + "/scenarios", Deps: []string{"k8s.io/client-go/rest"}},
		{ImportPath: Module + "/bench"},
		{ImportPath: Module + "/internal/node", Deps: []string{"k8s.io/client-go/kubernetes"}},
	}
	got := Violations(pkgs)
	if len(got) != 3 || !strings.Contains(got[0], "fault layer") || !strings.Contains(got[1], "no client code") || !strings.Contains(got[2], "under internal/") {
		t.Errorf("violations: %q", got)
	}
}

// TestReadmeIsCurrent fails when a package was added, moved or redescribed without regenerating the table.
func TestReadmeIsCurrent(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Update(string(b), Table(packages(t)))
	if err != nil {
		t.Fatal(err)
	}
	if want != string(b) {
		t.Error("README.md's \"How it works\" table is stale: run `go run ./internal/layout/cmd` from the repository root")
	}
}
