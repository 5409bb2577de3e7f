// Command lab is a CKA practice lab: it breaks a real kind cluster at one stage of a Pod's journey, shows an
// exam-style task, and grades the learner's fix against live cluster state.
package main

import (
	"os"

	"github.com/cka-lab/lab/cmd/lab/commands"
)

func main() {
	os.Exit(commands.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
