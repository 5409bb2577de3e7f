package coverage

import (
	"os"
	"testing"

	"github.com/cka-lab/lab/scenarios"
)

// TestReadmeIsCurrent fails when a scenario was added without regenerating the README's table.
func TestReadmeIsCurrent(t *testing.T) {
	c, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Update(string(b), c)
	if err != nil {
		t.Fatal(err)
	}
	if want != string(b) {
		t.Error("README.md's coverage table is stale: run `go run ./scenarios/coverage/cmd` from the repository root")
	}
}
