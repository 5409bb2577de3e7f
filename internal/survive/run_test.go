package survive

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/scenarios"
)

func pod(name, owner string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: k8stypes.UID("uid-" + name)}}
	if owner != "" {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{Kind: owner, Name: "web-1", Controller: &yes}}
	}
	return p
}

func outcome(id string, passed ...bool) grader.QuestionOutcome {
	q := grader.QuestionOutcome{ID: id, Passed: true}
	for i, ok := range passed {
		c := grader.CheckOutcome{Name: []string{"ready", "serves"}[i], Group: grader.GroupChecks, Points: 1, Passed: ok}
		if ok {
			c.Earned = 1
		} else {
			q.Passed = false
		}
		q.Score += c.Earned
		q.Max++
		q.Checks = append(q.Checks, c)
	}
	return q
}

func TestRunFailsWhatADisturbanceUndid(t *testing.T) {
	client := fake.NewClientset(pod("web-1-a", "ReplicaSet"), pod("bare", ""))
	env := Env{Clients: &kube.Clients{Kube: client}}
	checks := []scenarios.Check{{Name: "ready", PodsReady: &scenarios.PodsReady{PodSelector: sel("shop", "")}}}
	insts := []*scenarios.Instance{instance(checks, nil), instance(checks, nil)}
	insts[1].Scenario = &scenarios.Scenario{ID: "t", Checks: checks}
	plan := grader.Plan{Questions: []grader.Question{{ID: "s"}, {ID: "t"}}}
	// s passes and is disturbed; t fails its task and is left alone.
	out := &grader.Outcome{Questions: []grader.QuestionOutcome{outcome("s", true, true), outcome("t", false)}}
	var graded []grader.Plan
	grade := func(_ context.Context, p grader.Plan) (*grader.Outcome, error) {
		graded = append(graded, p)
		after := outcome("s", false, true)
		after.Checks[0].Evidence = "0 of 1 Pods Ready"
		return &grader.Outcome{Questions: []grader.QuestionOutcome{after}}, nil
	}
	var steps []string
	step := func(what string, fn func() error) error { steps = append(steps, what); return fn() }
	if err := Run(context.Background(), env, plan, out, insts, grade, step); err != nil {
		t.Fatal(err)
	}
	if len(graded) != 1 || len(graded[0].Questions) != 1 || graded[0].Questions[0].ID != "s" {
		t.Fatalf("graded again %+v, want question s alone", graded)
	}
	if !reflect.DeepEqual(steps, []string{"Survive: delete the workloads' Pods in namespace shop"}) {
		t.Errorf("steps = %q", steps)
	}
	want := []grader.Survived{{Disturbance: "delete the workloads' Pods in namespace shop", Undid: []string{"s: ready"}}}
	if !reflect.DeepEqual(out.Survive, want) {
		t.Errorf("Survive = %+v, want %+v", out.Survive, want)
	}
	c := out.Questions[0].Checks[0]
	if c.Passed || c.Earned != 0 || !strings.Contains(c.Evidence, "0 of 1 Pods Ready") || out.Questions[0].Passed {
		t.Errorf("undone check = %+v", c)
	}
	pods, err := client.CoreV1().Pods("shop").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Name != "bare" {
		t.Errorf("left %d Pods, want only the bare one, which no controller would bring back", len(pods.Items))
	}
}

func TestRunLeavesAFailingTaskAlone(t *testing.T) {
	insts := []*scenarios.Instance{instance([]scenarios.Check{{PodsReady: &scenarios.PodsReady{PodSelector: sel("shop", "")}}}, nil)}
	out := &grader.Outcome{Questions: []grader.QuestionOutcome{outcome("s", false)}}
	grade := func(context.Context, grader.Plan) (*grader.Outcome, error) {
		t.Fatal("a failing task is not graded again")
		return nil, nil
	}
	step := func(string, func() error) error { t.Fatal("nothing is disturbed"); return nil }
	if err := Run(context.Background(), Env{}, grader.Plan{Questions: []grader.Question{{ID: "s"}}}, out, insts, grade, step); err != nil {
		t.Fatal(err)
	}
	if out.Survive != nil {
		t.Errorf("Survive = %+v", out.Survive)
	}
}
