package class

import "runtime/debug"

// labVersion is the version of this lab binary as the build stamped it, "devel" for a build without one. The
// server and the learners compare it at join: a class's scenarios and checks are only the same for one version.
func labVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}
