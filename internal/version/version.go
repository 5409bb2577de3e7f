// Package version says which lab this is: the version `make build` and `make dist` stamp from `git describe`,
// else the module version the Go toolchain recorded, with the commit, toolchain and platform, in the shape of
// kubectl's version.Info.
package version

import (
	"runtime"
	"runtime/debug"
)

// gitVersion is set by the Makefile: -ldflags "-X github.com/cka-lab/lab/internal/version.gitVersion=...".
var gitVersion string

// Info is lab's build, named as kubectl names its own.
type Info struct {
	GitVersion   string `json:"gitVersion"`
	GitCommit    string `json:"gitCommit,omitempty"`
	GitTreeState string `json:"gitTreeState,omitempty"`
	// CommitDate is the commit's time, from the toolchain's VCS stamp (kubectl's BuildDate needs a flag).
	CommitDate string `json:"commitDate,omitempty"`
	GoVersion  string `json:"goVersion"`
	Compiler   string `json:"compiler"`
	Platform   string `json:"platform"`
}

// Get returns this binary's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuild(gitVersion, bi)
}

// fromBuild prefers the stamped version: a plain `go build` in a checkout records only a pseudo-version
// (v0.0.0-<date>-<commit>), and `go test` none at all.
func fromBuild(stamped string, bi *debug.BuildInfo) Info {
	i := Info{GitVersion: stamped, GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		bi = &debug.BuildInfo{}
	}
	if i.GitVersion == "" {
		i.GitVersion = bi.Main.Version
	}
	if i.GitVersion == "" {
		i.GitVersion = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.GitCommit = s.Value
		case "vcs.time":
			i.CommitDate = s.Value
		case "vcs.modified":
			i.GitTreeState = "clean"
			if s.Value == "true" {
				i.GitTreeState = "dirty"
			}
		}
	}
	return i
}
