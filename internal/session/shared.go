package session

import (
	"context"
	"errors"

	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/scenarios"
)

// errSharedExam: an exam breaks several namespaces and records a cluster-wide baseline, neither of which a
// learner's one namespace allows.
var errSharedExam = errors.New("an exam needs a lab cluster of your own: in a shared cluster's namespace lab runs one scenario at a time")

// instantiate chooses the scenario's values for seed. On a shared cluster the scenario is confined to the
// learner's namespace, and one that reaches beyond it is refused before anything is applied.
func (s *Session) instantiate(ctx context.Context, sc *scenarios.Scenario, seed int64) (*scenarios.Instance, error) {
	if s.Cluster.Shared() {
		return exam.Confine(sc, seed, exam.Nodeless{}, s.Cluster.Namespace)
	}
	return sc.Instantiate(seed, resolver{ctx: ctx, c: s.Cluster})
}

// recordNamespace holds the cluster's record of the attempt: lab's own namespace, or on a shared cluster the
// learner's, the only one lab may write there.
func (s *Session) recordNamespace() string {
	if s.Cluster.Shared() {
		return s.Cluster.Namespace
	}
	return cluster.MarkerNamespace
}
