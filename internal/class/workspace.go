package class

import (
	"context"
	"fmt"
	"time"
)

// Workspace is a learner's own namespace on the instructor's shared cluster, for rooms where learners have no
// cluster of their own.
type Workspace struct {
	Namespace string `json:"namespace"`
	// Kubeconfig is a complete kubeconfig for a ServiceAccount that may change nothing outside Namespace.
	Kubeconfig string `json:"kubeconfig"`
}

// SharedCluster is the instructor's cluster in a shared-cluster class: the server gives each learner a
// namespace there, and grades it itself with the instructor's credentials, so the scoreboard shows what the
// cluster holds rather than what a learner's lab says.
type SharedCluster interface {
	// Provision runs on every join, also when a learner joins again, so it must be idempotent: the same
	// namespace, with fresh credentials.
	Provision(ctx context.Context, learner string) (Workspace, error)
	// Grade evaluates the checks of the class's scenario, instantiated for seed, in the namespace.
	Grade(ctx context.Context, namespace, scenario string, seed int64) ([]CheckEvidence, error)
	// Revoke invalidates every credential issued for the namespace; the namespace and what is in it stay.
	Revoke(ctx context.Context, namespace string) error
}

// ProvisionTimeout bounds the preparation of one learner's workspace: a handful of API calls, slow only on a
// loaded shared cluster when a whole room joins at once.
const ProvisionTimeout = 90 * time.Second

// provision prepares the learner's workspace when the class runs on a shared cluster, nil otherwise. It runs
// before the learner is stored, so a join that fails here can simply be tried again.
func (s *Server) provision(ctx context.Context, learner string) (*Workspace, error) {
	if s.shared == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ProvisionTimeout)
	defer cancel()
	ws, err := s.shared.Provision(ctx, learner)
	if err != nil {
		return nil, fmt.Errorf("cannot prepare a namespace for %s on the shared cluster: %w", learner, err)
	}
	return &ws, nil
}

// revoke invalidates a learner's credentials on the shared cluster, if the class has one.
func (s *Server) revoke(ctx context.Context, l learner) error {
	if s.shared == nil || l.Namespace == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ProvisionTimeout)
	defer cancel()
	if err := s.shared.Revoke(ctx, l.Namespace); err != nil {
		return fmt.Errorf("the shared cluster's credentials of %s (namespace %s) are not revoked: %w", l.Name, l.Namespace, err)
	}
	return nil
}
