package examweb

import "os"

// Windows has no hangup and no process groups reachable by signal; a Windows build only reaches here from a
// native console, where ending the shell itself is what closing its window does.
func hangup(p *os.Process) { _ = p.Kill() }

func kill(p *os.Process) { _ = p.Kill() }
