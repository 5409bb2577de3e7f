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
	exists, err := p.Exists(name)
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
		if err := p.kind.Delete(name, rec.Kubeconfig); err != nil {
			return fmt.Errorf("delete kind cluster %s: %w", name, err)
		}
		return p.store.RemoveCluster(name)
	})
}

// Status is what `lab cluster status` reports.
type Status struct {
	Name       string       `json:"name"`
	ID         string       `json:"id,omitempty"`
	State      string       `json:"state"` // Running, Stopped, NotRunning, Missing, NotLab
	Message    string       `json:"message,omitempty"`
	Kubeconfig string       `json:"kubeconfig,omitempty"`
	NodeImage  string       `json:"nodeImage,omitempty"`
	Nodes      []NodeStatus `json:"nodes,omitempty"`
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
		st.State, st.Message = "Missing", err.Error()
		return st
	case errors.Is(err, ErrNotLab):
		st.State, st.Message = "NotLab", err.Error()
		return st
	case errors.Is(err, ErrStopped):
		var rec Record
		if p.store.Read(name, recordFile, &rec) == nil {
			st.ID, st.Kubeconfig, st.NodeImage = rec.ID, rec.Kubeconfig, rec.NodeImage
		}
		st.State, st.Message = "Stopped", err.Error()
		return st
	case err != nil:
		var rec Record
		if p.store.Read(name, recordFile, &rec) == nil {
			st.ID, st.Kubeconfig, st.NodeImage = rec.ID, rec.Kubeconfig, rec.NodeImage
		}
		st.State, st.Message = "NotRunning", err.Error()
		return st
	}
	st.ID, st.Kubeconfig, st.NodeImage, st.State = c.ID, c.Kubeconfig, c.NodeImage, "Running"
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nl, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		st.State, st.Message = "NotRunning", err.Error()
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
