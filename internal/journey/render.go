package journey

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fatih/color"
)

type palette struct {
	ok, bad, dim, hint *color.Color
}

// newPalette sets colour per instance rather than through color.NoColor so
// one caller's choice does not leak into other output.
func newPalette(on bool) palette {
	mk := func(attrs ...color.Attribute) *color.Color {
		c := color.New(attrs...)
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return c
	}
	return palette{
		ok:   mk(color.FgGreen),
		bad:  mk(color.FgRed, color.Bold),
		dim:  mk(color.Faint),
		hint: mk(color.FgYellow),
	}
}

// Render draws the journey as the whiteboard chain, one handoff per line,
// with the commands to investigate the stage where it stopped.
func Render(w io.Writer, r Result, useColor bool) {
	p := newPalette(useColor)
	width := 0
	for _, h := range r.Handoffs {
		width = max(width, utf8.RuneCountInString(h.Stage.Title()))
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, p.hint.Sprint(n))
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "kubectl")
	for _, h := range r.Handoffs {
		renderHandoff(w, p, h, width, r.Evidence)
	}
	if r.Stopped == "" && noPod(r) {
		// An RBAC or admission task ends at the API server: claiming a Running Pod would be false.
		fmt.Fprintln(w, p.ok.Sprint("request accepted (no Pod in this task)"))
		return
	}
	if r.Stopped == "" {
		fmt.Fprintln(w, p.ok.Sprint("Running + Ready"))
		return
	}
	fmt.Fprintln(w, p.dim.Sprint("Running + Ready (not reached)"))
}

func renderHandoff(w io.Writer, p palette, h Handoff, width int, evidence string) {
	title := h.Stage.Title()
	pad := strings.Repeat(" ", width-utf8.RuneCountInString(title)+2)
	switch h.Status {
	case Passed:
		line := p.ok.Sprint("✓") + " " + title
		if h.Detail != "" {
			line += pad + p.dim.Sprint(h.Detail)
		}
		fmt.Fprintln(w, "  "+line)
	case Failed:
		line := p.bad.Sprint("✗ " + title)
		if evidence != "" {
			line += pad + evidence
		}
		fmt.Fprintln(w, "  "+line)
		if h.Detail != "" && h.Detail != evidence {
			fmt.Fprintln(w, "      "+h.Detail)
		}
		cmds := h.Commands
		if len(cmds) == 0 {
			cmds = h.Stage.Commands()
		}
		for _, cmd := range cmds {
			fmt.Fprintln(w, "      "+p.hint.Sprint("try:")+" "+cmd)
		}
	case Skipped:
		fmt.Fprintln(w, "  "+p.dim.Sprint("· "+title+pad+"skipped: "+h.Detail))
	default:
		line := "· " + title + pad + "not reached"
		if h.Detail != "" {
			line += ": " + h.Detail
		}
		fmt.Fprintln(w, "  "+p.dim.Sprint(line))
	}
}

// noPod reports a journey whose Pod stages were all skipped because no Pod takes part.
func noPod(r Result) bool {
	for _, h := range r.Handoffs {
		if h.Stage.Index() >= Scheduling.Index() && h.Status != Skipped {
			return false
		}
	}
	return len(r.Handoffs) > 0
}
