package operator

import (
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func webapp(spec map[string]any, generation int64) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "platform.example.com/v1", "kind": "WebApp", "spec": spec}}
	o.SetName("shop")
	o.SetGeneration(generation)
	return o
}

func TestReadSpecDefaultsAndRefusals(t *testing.T) {
	s, err := ReadSpec(webapp(map[string]any{"image": "nginx:1.27"}, 1))
	if err != nil || s != (Spec{Image: "nginx:1.27", Replicas: 1, Port: 80}) {
		t.Errorf("ReadSpec(image only) = %+v, %v; want 1 replica on port 80", s, err)
	}
	s, err = ReadSpec(webapp(map[string]any{"image": "nginx:1.27", "replicas": int64(3), "port": int64(8080)}, 1))
	if err != nil || s.Replicas != 3 || s.Port != 8080 {
		t.Errorf("ReadSpec = %+v, %v; want 3 replicas on 8080", s, err)
	}
	if _, err := ReadSpec(webapp(map[string]any{"replicas": int64(2)}, 1)); err == nil {
		t.Error("a spec without an image was accepted")
	}
	if _, err := ReadSpec(webapp(map[string]any{"image": "nginx:1.27", "port": "80"}, 1)); err == nil {
		t.Error("a string port was accepted")
	}
}

func condition(t *testing.T, st map[string]any) map[string]any {
	t.Helper()
	conds, _ := st["conditions"].([]any)
	if len(conds) != 1 {
		t.Fatalf("want one condition, got %v", st["conditions"])
	}
	return conds[0].(map[string]any)
}

func TestStatusReportsReadyOnlyWhenRolledOut(t *testing.T) {
	two := int32(2)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: appsv1.DeploymentSpec{Replicas: &two}}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 1, ReadyReplicas: 1}
	o := webapp(map[string]any{"image": "nginx:1.27"}, 4)
	st := Status(o, d, nil)
	if c := condition(t, st); c["status"] != "False" || c["reason"] != "Progressing" || st["observedGeneration"] != int64(4) {
		t.Errorf("half rolled out: %v", st)
	}
	d.Status.AvailableReplicas, d.Status.ReadyReplicas = 2, 2
	st = Status(o, d, nil)
	if c := condition(t, st); c["status"] != "True" || st["readyReplicas"] != int64(2) {
		t.Errorf("rolled out: %v", st)
	}
	// The transition time stays while the status does not change, so an unchanged pass writes nothing.
	condition(t, st)["lastTransitionTime"] = "2020-01-01T00:00:00Z"
	_ = unstructured.SetNestedField(o.Object, st, "status")
	if again := Status(o, d, nil); !equalStatus(st, again) {
		t.Errorf("an unchanged status differs: %v then %v", st, again)
	}
	if c := condition(t, Status(o, nil, errors.New("forbidden"))); c["status"] != "False" || c["reason"] != "ReconcileFailed" || c["message"] != "forbidden" {
		t.Errorf("failure: %v", c)
	}
}

func TestDeploymentIsSelectedByName(t *testing.T) {
	d := Deployment("shop", "web", "webapp-operator", Spec{Image: "nginx:1.27", Replicas: 2, Port: 80})
	if *d.Spec.Replicas != 2 || d.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != "web" ||
		d.Spec.Template.Labels["app.kubernetes.io/managed-by"] != "webapp-operator" || *d.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" {
		t.Errorf("Deployment = %+v", d)
	}
}
