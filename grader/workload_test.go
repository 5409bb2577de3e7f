package grader

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/scenarios"
)

func controllerRef(kind, name string) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID(name + "-uid"), Controller: &yes}}
}

func readyPod(name string, owner []metav1.OwnerReference, extra map[string]string) *corev1.Pod {
	l := map[string]string{"app": "web"}
	for k, v := range extra {
		l[k] = v
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: l, OwnerReferences: owner},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
}

func replicaSet(name, revision string, owner []metav1.OwnerReference) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", OwnerReferences: owner,
		Annotations: map[string]string{revisionAnnotation: revision}}}
}

// The workload is the Deployment web at revision 2: only the Pods of its current ReplicaSet make it Ready.
func TestPodsReadyCountsTheCurrentRevisionOnly(t *testing.T) {
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Generation: 3,
		Annotations: map[string]string{revisionAnnotation: "2"}}, Status: appsv1.DeploymentStatus{ObservedGeneration: 3}}
	objs := []runtime.Object{dep,
		replicaSet("web-new", "2", controllerRef("Deployment", "web")),
		replicaSet("web-old", "1", controllerRef("Deployment", "web")),
		replicaSet("web-manual", "", nil)}
	cases := []struct {
		name string
		pods []runtime.Object
		pass bool
		why  string
	}{
		{"two Pods of the current revision", []runtime.Object{readyPod("a", controllerRef("ReplicaSet", "web-new"), nil), readyPod("b", controllerRef("ReplicaSet", "web-new"), nil)}, true, ""},
		{"a bare Pod with the workload's labels", []runtime.Object{readyPod("a", controllerRef("ReplicaSet", "web-new"), nil), readyPod("bare", nil, nil)}, false, "belongs to no controller"},
		{"the old revision's Pods left by a stuck rollout", []runtime.Object{readyPod("a", controllerRef("ReplicaSet", "web-old"), nil), readyPod("b", controllerRef("ReplicaSet", "web-old"), nil)}, false, "not its current revision 2"},
		{"a ReplicaSet written by hand", []runtime.Object{readyPod("a", controllerRef("ReplicaSet", "web-manual"), nil), readyPod("b", controllerRef("ReplicaSet", "web-manual"), nil)}, false, "no Deployment manages"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := Env{Clients: &kube.Clients{Kube: fake.NewClientset(append(objs, c.pods...)...)}}
			r := env.podsReady(context.Background(), &scenarios.PodsReady{PodSelector: scenarios.PodSelector{Namespace: "shop", Selector: "app=web"}, Count: 2})
			if r.OK != c.pass || !strings.Contains(r.Evidence, c.why) {
				t.Errorf("passed=%v %q, want passed=%v and %q", r.OK, r.Evidence, c.pass, c.why)
			}
		})
	}
}

// A Deployment that has not observed its latest spec has not made its new ReplicaSet yet: its Pods are not
// counted before it has. A StatefulSet's Pods count at its update revision only.
func TestCurrentOwnerOfStatefulSetsAndUnobservedDeployments(t *testing.T) {
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Generation: 4,
		Annotations: map[string]string{revisionAnnotation: "2"}}, Status: appsv1.DeploymentStatus{ObservedGeneration: 3}}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop", UID: "db-uid"},
		Status: appsv1.StatefulSetStatus{UpdateRevision: "db-222"}}
	kc := fake.NewClientset(dep, sts, replicaSet("web-new", "2", controllerRef("Deployment", "web")))
	o := &owners{e: Env{Clients: &kube.Clients{Kube: kc}}, ns: "shop"}
	cases := []struct {
		pod  *corev1.Pod
		want bool
	}{
		{readyPod("web-a", controllerRef("ReplicaSet", "web-new"), nil), false},
		{readyPod("db-0", controllerRef("StatefulSet", "db"), map[string]string{appsv1.ControllerRevisionHashLabelKey: "db-222"}), true},
		{readyPod("db-1", controllerRef("StatefulSet", "db"), map[string]string{appsv1.ControllerRevisionHashLabelKey: "db-111"}), false},
	}
	for _, c := range cases {
		ok, why, err := o.current(context.Background(), c.pod)
		if err != nil || ok != c.want {
			t.Errorf("%s: current=%v (%s, %v), want %v", c.pod.Name, ok, why, err, c.want)
		}
	}
}

// A Pod counts for podsReady's containers only with every named container running the image, in any
// spelling the runtime resolves the same.
func TestContainerImages(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1"}, Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "web", Image: "nginx:1.27"}, {Name: "log-agent", Image: "docker.io/library/busybox:1.36"},
	}}}
	for want, why := range map[string]string{
		"busybox:1.36": "",
		"busybox:1.63": "Pod web-1's container log-agent runs docker.io/library/busybox:1.36, want busybox:1.63",
	} {
		if got := containerImages(p, map[string]string{"log-agent": want, "web": "nginx:1.27"}); got != why {
			t.Errorf("want log-agent %s: got %q, want %q", want, got, why)
		}
	}
	if got := containerImages(p, map[string]string{"agent": "busybox:1.36"}); got != "Pod web-1 has no container agent" {
		t.Errorf("missing container: got %q", got)
	}
}

func TestAPodChangedInPlaceDoesNotCountForItsBrokenTemplate(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27-typo"}}}}
	pod := func(image string, managed ...metav1.ManagedFieldsEntry) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", ManagedFields: managed},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}, {Name: "injected", Image: "busybox:1.36"}}}}
	}
	created := metav1.ManagedFieldsEntry{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:image":{}}}}}`)}}
	setImage := metav1.ManagedFieldsEntry{Manager: "kubectl-set", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:image":{}}}}}`)}}
	relabel := metav1.ManagedFieldsEntry{Manager: "kubectl-label", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:tier":{}}}}`)}}
	status := metav1.ManagedFieldsEntry{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:containerStatuses":{},"f:image":{}}}`)}}
	if why := changedInPlace(pod("nginx:1.27", created, setImage), tmpl); !strings.Contains(why, "set on the Pod itself") {
		t.Errorf("an image set on the running Pod: %q", why)
	}
	// A webhook's image at admission, a relabel and the kubelet's status are no change of the image in place.
	if why := changedInPlace(pod("nginx:1.27", created, relabel, status), tmpl); why != "" {
		t.Errorf("no image written after creation: %q", why)
	}
	if why := changedInPlace(pod("nginx:1.27-typo", created, setImage), tmpl); why != "" {
		t.Errorf("an image set in place to what the template says: %q", why)
	}
}
