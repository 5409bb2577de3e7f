package version

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFromBuild(t *testing.T) {
	vcs := &debug.BuildInfo{
		Main: debug.Module{Version: "v0.0.0-20261207190000-7272f0b1a2b3+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "7272f0b1a2b3"}, {Key: "vcs.time", Value: "2026-12-07T19:00:00Z"}, {Key: "vcs.modified", Value: "true"},
		},
	}
	got := fromBuild("7272f0b-dirty", vcs)
	want := Info{GitVersion: "7272f0b-dirty", GitCommit: "7272f0b1a2b3", GitTreeState: "dirty", CommitDate: "2026-12-07T19:00:00Z",
		GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if got != want {
		t.Errorf("stamped:\n got %+v\nwant %+v", got, want)
	}
	if got := fromBuild("", vcs); got.GitVersion != vcs.Main.Version {
		t.Errorf("unstamped: the module version, got %q", got.GitVersion)
	}
	if got := fromBuild("", nil); got.GitVersion != "(devel)" || got.GitCommit != "" || got.GoVersion == "" {
		t.Errorf("no build info (go test): %+v", got)
	}
}
