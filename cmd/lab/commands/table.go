package commands

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
)

// kubectlTable prints kubectl-style tables: upper-case headers, no borders, columns padded, no trailing blanks.
type kubectlTable struct {
	table.Writer
	w io.Writer
}

func newTable(w io.Writer) *kubectlTable {
	t := table.NewWriter()
	s := table.StyleDefault
	s.Options = table.Options{SeparateColumns: false}
	s.Box.PaddingLeft, s.Box.PaddingRight = "", "   "
	s.Format.Header = 0
	t.SetStyle(s)
	return &kubectlTable{Writer: t, w: w}
}

// Render writes the table.
func (t *kubectlTable) Render() {
	for _, line := range strings.Split(t.Writer.Render(), "\n") {
		fmt.Fprintln(t.w, strings.TrimRight(line, " "))
	}
}

func row(cells ...any) table.Row { return table.Row(cells) }

// shortDuration prints 6m rather than 6m0s, as kubectl's AGE column does.
func shortDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.Round(time.Second).String()
}
