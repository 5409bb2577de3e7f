package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

// outputFlags is -o for every command that prints a result: text for people (the default), or one JSON
// document for scripts.
type outputFlags struct{ format string }

func (o *outputFlags) addFlags(c *cobra.Command) {
	c.Flags().StringVarP(&o.format, "output", "o", "text", "output format: text or json")
}

func (o *outputFlags) validate() error {
	switch o.format {
	case "", "text", "json":
		return nil
	}
	return fmt.Errorf("unknown output format %q: use -o json or -o text", o.format)
}

func (o *outputFlags) json() bool { return o.format == "json" }

// print writes v as JSON with -o json; otherwise text prints the result for people.
func (o *outputFlags) print(w io.Writer, v any, text func() error) error {
	if o.json() {
		return json.NewEncoder(w).Encode(v)
	}
	return text()
}

// isTerminal reports whether a command's stream is a terminal, which a prompt or an interactive shell needs.
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}
