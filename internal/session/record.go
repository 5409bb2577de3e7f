package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// attemptRecord is the scenario in progress as the cluster itself records it. Grading reads what to grade
// from here, not from a local file a learner could edit to point the checks at something healthy.
const attemptRecord = "lab-attempt"

// errUnreachable is a record read that got no answer from the API server at all.
var errUnreachable = errors.New("the API server did not answer")

func (s *Session) writeRecord(ctx context.Context, a *Attempt) error {
	values, err := json.Marshal(a.Values)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: attemptRecord, Namespace: s.recordNamespace(), Labels: map[string]string{"app.kubernetes.io/managed-by": "lab"}},
		Data:       map[string]string{"scenario": a.Scenario, "seed": strconv.FormatInt(a.Seed, 10), "values": string(values)},
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cms := s.Cluster.Kube.CoreV1().ConfigMaps(s.recordNamespace())
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
		return err
	} else if err != nil {
		return fmt.Errorf("record the attempt in the cluster: %w", err)
	}
	return nil
}

// readRecord returns the cluster's record of the attempt, nil when there is none.
func (s *Session) readRecord(ctx context.Context) (*Attempt, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cm, err := s.Cluster.Kube.CoreV1().ConfigMaps(s.recordNamespace()).Get(ctx, attemptRecord, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		if unanswered(err) {
			err = fmt.Errorf("%w: %w", errUnreachable, err)
		}
		return nil, fmt.Errorf("read the attempt from the cluster: %w", err)
	}
	a := &Attempt{Scenario: cm.Data["scenario"]}
	if a.Seed, err = strconv.ParseInt(cm.Data["seed"], 10, 64); err != nil {
		return nil, fmt.Errorf("the cluster's attempt record is damaged (seed): run `lab reset`")
	}
	if err := json.Unmarshal([]byte(cm.Data["values"]), &a.Values); err != nil {
		return nil, fmt.Errorf("the cluster's attempt record is damaged (values): run `lab reset`")
	}
	return a, nil
}

// unanswered says whether err means the API server could not answer the question at all: no connection, or
// one that is still starting (5xx, 429) as it is right after a control-plane fix. A starting API server also
// refuses lab's admin (401, 403) until its authorizers have synced: kubeadm's admin is authorized by RBAC
// (kubeadm:cluster-admins), not by the system:masters group. A 404 is an answer.
func unanswered(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	switch code := status.Status().Code; {
	case code >= 500, code == http.StatusTooManyRequests, code == http.StatusForbidden, code == http.StatusUnauthorized:
		return true
	}
	return false
}

func (s *Session) deleteRecord(ctx context.Context) error {
	err := s.Cluster.Kube.CoreV1().ConfigMaps(s.recordNamespace()).Delete(ctx, attemptRecord, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove the attempt record: %w", err)
	}
	return nil
}
