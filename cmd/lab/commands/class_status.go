package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/class"
)

// classStatusJSON is `lab class status -o json`: the plan, where the learner is, and the hints the instructor
// revealed for the current scenario. The learner's key is not in it.
type classStatusJSON struct {
	URL             string     `json:"url"`
	Learner         string     `json:"learner"`
	Namespace       string     `json:"namespace,omitempty"`
	Plan            class.Plan `json:"plan"`
	Current         string     `json:"current"`
	TimeLeftSeconds float64    `json:"timeLeftSeconds"`
	Offline         bool       `json:"offline"`
	RevealedHints   []string   `json:"revealedHints"`
}

func newClassStatusCmd(f *Factory) *cobra.Command {
	var output outputFlags
	c := &cobra.Command{
		Use:     "status",
		Short:   "Show the class: its scenarios, the one you are on, the time left and the hints your instructor revealed",
		Example: "  lab class status\n  lab class status -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.validate(); err != nil {
				return err
			}
			var out classStatusJSON
			local, cs, err := currentClass(f)
			if err != nil {
				return err
			}
			if plan, err := class.NewClient(cs.Membership).Plan(cmd.Context()); err != nil {
				fmt.Fprintf(f.ErrOut, "warning: showing the plan as last seen: %v\n", err)
				out.Offline = true
			} else if cs, err = local.Update(cmd.Context(), func(j *class.Joined) (*class.Joined, error) {
				if j == nil {
					return nil, class.ErrNotJoined
				}
				j.Plan = plan
				return j, nil
			}); err != nil {
				return err
			}
			out.URL, out.Learner, out.Current = cs.Membership.URL, cs.Membership.Name, cs.Scenario()
			if ws := cs.Membership.Workspace; ws != nil {
				out.Namespace = ws.Namespace
			}
			out.Plan, out.TimeLeftSeconds = cs.Plan, cs.Plan.TimeLeft(time.Now()).Seconds()
			out.RevealedHints = revealedHints(cmd.Context(), f, cs)
			if output.json() {
				return json.NewEncoder(f.Out).Encode(out)
			}
			printClassStatus(f.Out, out)
			return nil
		},
	}
	output.addFlags(c)
	return c
}

// revealedHints are the current scenario's hints the instructor revealed to everyone, worded for the
// learner's attempt; none when that scenario is not the one running here.
func revealedHints(ctx context.Context, f *Factory, cs *class.Joined) []string {
	n := cs.Plan.RevealedHints[cs.Scenario()]
	if n == 0 {
		return nil
	}
	sess, err := f.Session(ctx)
	if err != nil {
		return nil
	}
	a, inst, err := currentInstance(ctx, f, sess)
	if err != nil || a.Scenario != cs.Scenario() {
		return nil
	}
	return inst.Hints[:min(n, len(inst.Hints))]
}

func printClassStatus(w io.Writer, s classStatusJSON) {
	fmt.Fprintf(w, "Class:     %s (%s) at %s\n", s.Plan.Title, s.Plan.ClassID, s.URL)
	where := "your lab cluster"
	if s.Namespace != "" {
		where = "namespace " + s.Namespace + " of the shared cluster"
	}
	fmt.Fprintf(w, "Learner:   %s, on %s\n", s.Learner, where)
	clock := shortDuration(time.Duration(s.TimeLeftSeconds * float64(time.Second)))
	switch {
	case s.Plan.Paused:
		clock += " (paused by your instructor)"
	case s.TimeLeftSeconds == 0:
		clock = "none: the class's time is up"
	}
	if s.Offline {
		clock += " (as last seen: the class server did not answer)"
	}
	fmt.Fprintf(w, "Time left: %s\n", clock)
	if s.Plan.Exam {
		fmt.Fprintf(w, "Exam:      every scenario at once (`lab exam status` shows the questions)\n")
	}
	fmt.Fprintln(w, "Scenarios:")
	for i, id := range s.Plan.Scenarios {
		mark := " "
		if id == s.Current && !s.Plan.Exam {
			mark = ">"
		}
		fmt.Fprintf(w, "  %s %d. %s\n", mark, i+1, id)
	}
	if len(s.RevealedHints) > 0 {
		fmt.Fprintf(w, "Hints your instructor revealed for %s (free):\n", s.Current)
		for i, h := range s.RevealedHints {
			fmt.Fprintf(w, "  %d. %s\n", i+1, h)
		}
	}
}
