package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Delete removes a lab cluster and lab's record of it. It refuses kind clusters lab did not create.
func (p *Provider) Delete(ctx context.Context, name string) error {
	exists, err := p.Exists(ctx, name)
	if err != nil {
		return err
	}
	var rec Record
	recErr := p.store.Read(name, recordFile, &rec)
	if !exists {
		if recErr == nil {
			return p.store.RemoveCluster(name)
		}
		return fmt.Errorf("no lab cluster %q to delete: %w", name, ErrNoCluster)
	}
	if recErr != nil {
		return &NotLabError{Name: name, Reason: "lab has no record of it"}
	}
	// A half-made cluster may have no marker yet; lab's record alone proves it is lab's.
	if rec.Phase == PhaseReady {
		if _, err := p.Get(ctx, name); err != nil && errors.Is(err, ErrNotLab) {
			return err
		}
	}
	return p.status.Step(fmt.Sprintf("Deleting cluster %q", name), func() error {
		if err := p.deleteNodes(ctx, name, rec.Kubeconfig); err != nil {
			return err
		}
		return p.store.RemoveCluster(name)
	})
}

// deleteAttempts bounds how often a delete that Docker could not finish is retried after a thaw.
const deleteAttempts = 3

// deleteNodes removes the cluster's node containers with kind. It first thaws cgroups left frozen in them, and
// thaws and tries again when Docker could not kill a container (see frozen.go): a frozen process never dies.
func (p *Provider) deleteNodes(ctx context.Context, name, kubeconfig string) error {
	var err error
	for attempt := 1; attempt <= deleteAttempts; attempt++ {
		p.thawBefore(ctx, name, "deleting")
		if err = p.kind.Delete(name, kubeconfig); err == nil || !killFailed(err) {
			break
		}
	}
	if err != nil {
		if out := dockerOutput(err); out != "" {
			return fmt.Errorf("delete kind cluster %s: %s: %w", name, out, err)
		}
		return fmt.Errorf("delete kind cluster %s: %w", name, err)
	}
	return nil
}

// thawBefore thaws every running node of the cluster before lab stops, deletes or reuses it, says so when it
// did, and returns the nodes it thawed. It is best effort: a node it cannot look into is left to Docker, and
// to the retry when Docker fails.
func (p *Provider) thawBefore(ctx context.Context, name, doing string) []string {
	running, err := runningNodes(ctx, name)
	if err != nil || len(running) == 0 {
		return nil
	}
	thawed, _ := ThawNodes(ctx, running)
	var nodes []string
	for _, n := range running {
		if t := thawed[n]; len(t) > 0 {
			p.status.Info("Thawed %d cgroup(s) left frozen in node %s before %s it (%s)", len(t), n, doing, shortCgroups(t))
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// State is what `lab cluster status` says of a cluster.
type State string

// The states of a cluster: only a Running one can be used.
const (
	StateRunning    State = "Running"
	StateStopped    State = "Stopped"
	StateNotRunning State = "NotRunning"
	StateMissing    State = "Missing"
	StateNotLab     State = "NotLab"
)

// Status is what `lab cluster status` reports.
type Status struct {
	Name       string       `json:"name"`
	ID         string       `json:"id,omitempty"`
	State      State        `json:"state"`
	Message    string       `json:"message,omitempty"`
	Kubeconfig string       `json:"kubeconfig,omitempty"`
	NodeImage  string       `json:"nodeImage,omitempty"`
	Nodes      []NodeStatus `json:"nodes,omitempty"`
	// Frozen names, per node container, the cgroups left frozen in it (see frozen.go).
	Frozen map[string][]string `json:"frozenCgroups,omitempty"`
	// Warnings are one line each about the cluster's health that do not change its state.
	Warnings []string `json:"warnings,omitempty"`
}

// NodeStatus is one node of Status.
type NodeStatus struct {
	Name    string `json:"name"`
	Role    string `json:"role"`
	Ready   bool   `json:"ready"`
	Version string `json:"version"`
}

// Status reports the named cluster without changing it.
func (p *Provider) Status(ctx context.Context, name string) Status {
	st := Status{Name: name}
	c, err := p.Get(ctx, name)
	switch {
	case errors.Is(err, ErrNoCluster):
		st.State, st.Message = StateMissing, err.Error()
		return st
	case errors.Is(err, ErrNotLab):
		st.State, st.Message = StateNotLab, err.Error()
		return st
	case errors.Is(err, ErrStopped):
		var rec Record
		if p.store.Read(name, recordFile, &rec) == nil {
			st.ID, st.Kubeconfig, st.NodeImage = rec.ID, rec.Kubeconfig, rec.NodeImage
		}
		st.State, st.Message = StateStopped, err.Error()
		return st
	case err != nil:
		var rec Record
		if p.store.Read(name, recordFile, &rec) == nil {
			st.ID, st.Kubeconfig, st.NodeImage = rec.ID, rec.Kubeconfig, rec.NodeImage
		}
		st.State, st.Message = StateNotRunning, err.Error()
		return st
	}
	st.ID, st.Kubeconfig, st.NodeImage, st.State = c.ID, c.Kubeconfig, c.NodeImage, StateRunning
	st.frozen(ctx)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nl, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		st.State, st.Message = StateNotRunning, err.Error()
		return st
	}
	for _, n := range nl.Items {
		role := "worker"
		if _, ok := n.Labels["node-role.kubernetes.io/control-plane"]; ok {
			role = "control-plane"
		}
		st.Nodes = append(st.Nodes, NodeStatus{Name: n.Name, Role: role, Ready: NodeReady(&n), Version: n.Status.NodeInfo.KubeletVersion})
	}
	return st
}

// frozen looks for cgroups left frozen in the cluster's running nodes and adds a warning per node.
func (st *Status) frozen(ctx context.Context) {
	running, err := runningNodes(ctx, st.Name)
	if err != nil {
		return
	}
	for _, n := range running {
		f, err := FrozenCgroups(ctx, n)
		if err != nil || len(f) == 0 {
			continue
		}
		if st.Frozen == nil {
			st.Frozen = map[string][]string{}
		}
		st.Frozen[n] = f
		st.Warnings = append(st.Warnings, fmt.Sprintf("node %s has %d cgroup(s) left frozen (%s): their processes cannot stop; "+
			"`lab cluster delete` and `lab cluster create` thaw them first", n, len(f), shortCgroups(f)))
	}
}
