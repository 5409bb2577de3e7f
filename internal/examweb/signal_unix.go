//go:build !windows

package examweb

import (
	"os"
	"syscall"
)

// hangup sends SIGHUP to the shell's process group, as closing a terminal window does: pty.Start made the
// shell a session leader, so its process group is its pid.
func hangup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGHUP) }

// kill ends the shell's whole process group.
func kill(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
