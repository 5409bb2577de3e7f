package session

import (
	"context"
	"fmt"
	"time"

	nodeutils "sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/cka-lab/lab/internal/coach"
	"github.com/cka-lab/lab/scenarios"
)

// coachTimeout bounds reading the audit log: a few MiB through docker exec.
const coachTimeout = 20 * time.Second

// Coaching is what a coach would say of the learner's writes since the task was shown, from the API server's
// audit log; found is false on a cluster created before lab kept one.
func (s *Session) Coaching(ctx context.Context, a *Attempt, inst *scenarios.Instance) (notes []coach.Note, found bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, coachTimeout)
	defer cancel()
	ns, err := s.Cluster.Nodes()
	if err != nil {
		return nil, false, err
	}
	cps, err := nodeutils.SelectNodesByRole(ns, "control-plane")
	if err != nil || len(cps) == 0 {
		return nil, false, fmt.Errorf("no control-plane node to read the audit log from: %v", err)
	}
	events, found, err := coach.Read(ctx, cps[0])
	if err != nil || !found {
		return nil, found, err
	}
	namespaces, objects := inst.Involved()
	return coach.Notes(coach.Learner(events, a.Started), coach.NewScope(inst.Task, namespaces, objects)), true, nil
}
