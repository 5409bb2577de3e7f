package commands

import (
	"io"
	"os"
	"slices"
	"testing"

	"github.com/cka-lab/lab/injector/addons"
	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/tools"
)

// save carries each program this machine has and, for a component it lacks, the upstream image, before the
// node image; no helm or etcdutl is noted for a warning, a LAB_HELM that names nothing is an error.
func TestBundleSaveCarriesProgramsOrUpstreamImages(t *testing.T) {
	t.Setenv("LAB_STATE_DIR", t.TempDir())
	t.Setenv("PATH", t.TempDir())
	t.Setenv(tools.HelmEnv, "")
	t.Setenv(tools.EtcdutlEnv, "")
	t.Setenv(tools.MetricsServerEnv, os.Args[0])
	t.Setenv(tools.TraefikEnv, "")
	f := &Factory{Out: io.Discard, ErrOut: io.Discard}
	o := &bundleSaveOptions{}
	if err := o.complete(f, nil, []string{"lab-images.tar"}); err != nil {
		t.Fatal(err)
	}
	if want := []bundleTool{{tools.MetricsServerName, os.Args[0]}}; !slices.Equal(o.tools, want) || len(o.missing) != 2 {
		t.Errorf("tools %v, missing %q; want %v and warnings for helm and etcdutl", o.tools, o.missing, want)
	}
	if !slices.Contains(o.refs, addons.TraefikImage) || slices.Contains(o.refs, addons.MetricsServerImage) || o.refs[len(o.refs)-1] != cluster.NodeImage() {
		t.Errorf("images %v: want Traefik's upstream image, not metrics-server's, and the node image last", o.refs)
	}

	t.Setenv(tools.HelmEnv, "/nonexistent/helm")
	if err := (&bundleSaveOptions{}).complete(f, nil, []string{"lab-images.tar"}); err == nil {
		t.Error("a LAB_HELM naming nothing was taken for no helm")
	}
}
