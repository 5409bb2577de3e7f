package commands

import (
	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/class"
)

func newClassCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "class",
		Short: "Instructor-led workshops: serve a class with a live scoreboard, or join one as a learner",
		Long: `class runs a workshop on a LAN. The instructor serves a class (its scenarios, seed and time limit) and
opens the scoreboard; each learner joins with the class token over https, pinning the server's certificate
by the fingerprint in the join command, and lab starts the class's scenarios one after
the other on the learner's own cluster, or in the learner's own namespace of the instructor's shared cluster.
Every lab check, hint and diagnose is reported to the scoreboard; a class server that cannot be reached
never changes a grade.`,
		Example: `  lab class serve --scenarios bad-image-tag,readiness-probe-wrong-path --time-limit 45m
  lab class join https://192.168.1.20:8787 --fingerprint 5E:0A:...:C1 --token Q2X7K9 --name alice
  lab class next
  lab class status
  lab class leave`,
	}
	c.AddCommand(newClassServeCmd(f), newClassJoinCmd(f), newClassNextCmd(f), newClassStatusCmd(f), newClassLeaveCmd(f))
	return c
}

// joinedClass is this machine's class membership, kept in lab's state directory.
func joinedClass(f *Factory) (class.Local, error) {
	st, err := f.Store()
	if err != nil {
		return class.Local{}, err
	}
	return class.LocalIn(st), nil
}

// currentClass is the joined class, class.ErrNotJoined when there is none.
func currentClass(f *Factory) (class.Local, *class.Joined, error) {
	local, err := joinedClass(f)
	if err != nil {
		return class.Local{}, nil, err
	}
	j, err := local.Current()
	return local, j, err
}
