package grader

import (
	"context"
	"fmt"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/scenarios"
)

// Symptom is one of a scenario's symptoms as the cluster shows it now: OK means the fault still shows.
type Symptom struct {
	Name   string
	Result Result
}

// ExplainRequest traces a task with no Pod (RBAC, admission) from its symptoms: an admission symptom's dry run
// yields the API server's own error, which the journey classifies; without one, a can-i symptom that still says
// no stops at authorization. A symptom that no longer holds means the request now gets through. subject names
// the request traced.
func ExplainRequest(ctx context.Context, env Env, symptoms []scenarios.Check) (subject string, res journey.Result, shown []Symptom, err error) {
	var admission, canI *Symptom
	var admissionAs, canIAs string
	shown = make([]Symptom, 0, len(symptoms))
	for _, c := range symptoms {
		shown = append(shown, Symptom{c.Name, Evaluate(ctx, env, c)})
		last := &shown[len(shown)-1]
		switch {
		case c.Admission != nil && !c.Admission.Allowed && admission == nil:
			admission, admissionAs = last, c.Admission.As
		case c.CanI != nil && !c.CanI.Allowed && canI == nil:
			canI, canIAs = last, c.CanI.As
		}
	}
	switch {
	case admission != nil:
		subject, res = "the request "+requester(admissionAs)+" (server-side dry run)", journey.Request("", "", "")
		if admission.Result.OK {
			res = journey.Trace(journey.Evidence{APIError: admission.Result.Evidence})
		}
	case canI != nil:
		subject, res = "the request "+requester(canIAs)+" (access review)", journey.Request("", "", "")
		if canI.Result.OK {
			res = journey.Request(journey.Authorization, "RBAC does not allow this request", canI.Result.Evidence)
		}
	default:
		return "", journey.Result{}, nil, fmt.Errorf("no Pod and no API request to trace")
	}
	return subject, res, shown, nil
}

func requester(as string) string {
	if as == "" {
		return "of your kubeconfig's user"
	}
	return "as " + as
}
