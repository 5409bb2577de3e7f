// Command cmd rewrites the "How it works" table in README.md from the packages' doc comments.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/cka-lab/lab/internal/layout"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "layout:", err)
		os.Exit(1)
	}
}

func run() error {
	pkgs, err := layout.List(context.Background(), ".")
	if err != nil {
		return err
	}
	b, err := os.ReadFile("README.md")
	if err != nil {
		return fmt.Errorf("run it from the repository root: %w", err)
	}
	out, err := layout.Update(string(b), layout.Table(pkgs))
	if err != nil {
		return err
	}
	return os.WriteFile("README.md", []byte(out), 0o644)
}
