// Command cmd rewrites the stage-coverage table in README.md from the scenario catalogue.
package main

import (
	"fmt"
	"os"

	"github.com/cka-lab/lab/scenarios"
	"github.com/cka-lab/lab/scenarios/coverage"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	c, err := scenarios.Builtin()
	if err != nil {
		return err
	}
	b, err := os.ReadFile("README.md")
	if err != nil {
		return fmt.Errorf("run from the repository root: %w", err)
	}
	out, err := coverage.Update(string(b), c)
	if err != nil {
		return err
	}
	return os.WriteFile("README.md", []byte(out), 0o644)
}
