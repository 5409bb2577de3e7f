package session

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestUnansweredIsNoConnectionOrAServerStillStarting(t *testing.T) {
	cm := schema.GroupResource{Resource: "configmaps"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"), true},
		{"starting: 503", apierrors.NewServiceUnavailable("etcd is not ready"), true},
		{"starting: 500", apierrors.NewInternalError(errors.New("poststarthook not finished")), true},
		{"throttled: 429", apierrors.NewTooManyRequests("later", 1), true},
		{"authorizers not synced: 403", apierrors.NewForbidden(cm, "lab-attempt", errors.New("no")), true},
		{"authenticators not ready: 401", apierrors.NewUnauthorized("who"), true},
		{"no record: 404", apierrors.NewNotFound(cm, "lab-attempt"), false},
	} {
		if got := unanswered(tc.err); got != tc.want {
			t.Errorf("%s: unanswered = %v, want %v", tc.name, got, tc.want)
		}
	}
}
