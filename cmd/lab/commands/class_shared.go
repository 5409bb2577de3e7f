package commands

import (
	"github.com/cka-lab/lab/internal/cluster"
)

// sharedCluster is the learner's namespace on the class's shared cluster when this machine joined a
// shared-cluster class; shared is false otherwise. Every command that works on "the cluster" (start, check,
// hint, reset, the grader's child process) then works there instead of on a kind cluster.
func (f *Factory) sharedCluster() (c *cluster.Cluster, shared bool, err error) {
	local, err := joinedClass(f)
	if err != nil {
		return nil, false, nil
	}
	j, err := local.Read()
	if err != nil {
		return nil, true, err
	}
	if j == nil || j.Membership.Workspace == nil {
		return nil, false, nil
	}
	c, err = cluster.Attach(j.SharedClusterName(), local.WorkspaceKubeconfig(j), j.Membership.Workspace.Namespace)
	return c, true, err
}
