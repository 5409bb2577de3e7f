package commands

import (
	"fmt"

	"github.com/cka-lab/lab/internal/class"
	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/state"
)

// sharedName is the name lab keeps a shared cluster's namespace under in its state directory, apart from
// any kind cluster of the same name.
func sharedName(ws *class.Workspace) string { return "shared-" + ws.Namespace }

// sharedCluster is the learner's namespace on the class's shared cluster when this machine joined a
// shared-cluster class; shared is false otherwise. Every command that works on "the cluster" (start, check,
// hint, reset, the grader's child process) then works there instead of on a kind cluster.
func (f *Factory) sharedCluster() (c *cluster.Cluster, shared bool, err error) {
	st, err := f.Store()
	if err != nil {
		return nil, false, nil
	}
	cs, err := readClass(st)
	if err != nil {
		return nil, true, err
	}
	if cs == nil || cs.Membership.Workspace == nil {
		return nil, false, nil
	}
	ws := cs.Membership.Workspace
	c, err = cluster.Attach(sharedName(ws), st.Path(sharedName(ws), "kubeconfig"), ws.Namespace)
	return c, true, err
}

// saveWorkspace writes the learner's kubeconfig for the shared cluster (0600: it holds their token).
func saveWorkspace(st *state.Store, ws *class.Workspace) (string, error) {
	path := st.Path(sharedName(ws), "kubeconfig")
	if err := state.WriteFile(path, []byte(ws.Kubeconfig)); err != nil {
		return "", fmt.Errorf("save the shared cluster's kubeconfig: %w", err)
	}
	return path, nil
}
