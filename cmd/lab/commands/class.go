package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/class"
	"github.com/cka-lab/lab/internal/state"
)

func newClassCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "class",
		Short: "Instructor-led workshops: serve a class with a live scoreboard, or join one as a learner",
		Long: `class runs a workshop on a LAN. The instructor serves a class (its scenarios, seed and time limit) and
opens the scoreboard; each learner joins with the class token, and lab starts the class's scenarios one after
the other on the learner's own cluster, or in the learner's own namespace of the instructor's shared cluster.
Every lab check, hint and diagnose is reported to the scoreboard; a class server that cannot be reached
never changes a grade.`,
		Example: `  lab class serve --scenarios bad-image-tag,readiness-probe-wrong-path --time-limit 45m
  lab class join http://192.168.1.20:8787 --token Q2X7K9 --name alice
  lab class next
  lab class status
  lab class leave`,
	}
	c.AddCommand(newClassServeCmd(f), newClassJoinCmd(f), newClassNextCmd(f), newClassStatusCmd(f), newClassLeaveCmd(f))
	return c
}

// classFile holds the class this machine joined, in lab's state directory: it carries the learner's key.
const classFile = "class.json"

// classState is what `lab class join` keeps: the membership, the plan as last seen, and the learner's place
// in it.
type classState struct {
	Membership class.Membership `json:"membership"`
	Plan       class.Plan       `json:"plan"`
	// Current is the index in Plan.Scenarios of the scenario the learner is on.
	Current int `json:"current"`
	// Cluster is the lab cluster the class's scenarios run on: attempts on another cluster of this machine are
	// not the class's, and are not reported to it.
	Cluster string `json:"cluster,omitempty"`
}

// errNoClass is what the class commands say on a machine that joined none.
var errNoClass = errors.New("this machine is not in a class: join one with `lab class join URL --name NAME --token TOKEN`")

func classPath(st *state.Store) string { return filepath.Join(st.Root(), classFile) }

// readClass returns the class this machine joined, nil when none.
func readClass(st *state.Store) (*classState, error) {
	b, err := os.ReadFile(classPath(st))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read class membership: %w", err)
	}
	var cs classState
	if err := json.Unmarshal(b, &cs); err != nil {
		return nil, fmt.Errorf("read class membership %s (`lab class leave` forgets it): %w", classPath(st), err)
	}
	return &cs, nil
}

func writeClass(st *state.Store, cs *classState) error {
	b, err := json.MarshalIndent(cs, "", "  ")
	if err != nil {
		return fmt.Errorf("encode class membership: %w", err)
	}
	if err := state.WriteFile(classPath(st), append(b, '\n')); err != nil {
		return fmt.Errorf("save class membership: %w", err)
	}
	return nil
}

func removeClass(st *state.Store) error {
	if err := os.Remove(classPath(st)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("forget the class: %w", err)
	}
	return nil
}

// currentClass is the joined class, errNoClass when there is none.
func currentClass(f *Factory) (*state.Store, *classState, error) {
	st, err := f.Store()
	if err != nil {
		return nil, nil, err
	}
	cs, err := readClass(st)
	if err == nil && cs == nil {
		err = errNoClass
	}
	return st, cs, err
}

// scenarioID is the plan's scenario the learner is on.
func (cs *classState) scenarioID() string {
	if cs.Current < 0 || cs.Current >= len(cs.Plan.Scenarios) {
		return ""
	}
	return cs.Plan.Scenarios[cs.Current]
}
