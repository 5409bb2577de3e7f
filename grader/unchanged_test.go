package grader

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/cka-lab/lab/internal/baseline"
	"github.com/cka-lab/lab/scenarios"
)

// world is a small cluster as the task finds it: in namespace shop, Deployment web (the task's, reached
// through Service web and reading ConfigMap web-config) and Deployment cache (not the task's), a
// default-deny NetworkPolicy, a deployer ServiceAccount bound to a Role; a worker node.
type world struct {
	objs  []runtime.Object
	nodes map[string]baseline.Node
}

func deployment(name string, replicas int32, lbls map[string]string, cm string) *appsv1.Deployment {
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
			},
		},
	}
	if cm != "" {
		d.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}
	}
	return d
}

func newWorld() *world {
	return &world{
		objs: []runtime.Object{
			&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"kubernetes.io/metadata.name": "shop"}}},
			&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "default"}},
			deployment("web", 2, map[string]string{"app": "web", "tier": "front"}, "web-config"),
			deployment("cache", 2, map[string]string{"app": "cache", "tier": "front"}, ""),
			&corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}},
			&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "web-config", Namespace: "shop"}, Data: map[string]string{"MODE": "prod"}},
			&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "cache-config", Namespace: "shop"}, Data: map[string]string{"SIZE": "1"}},
			&networkingv1.NetworkPolicy{TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"}, ObjectMeta: metav1.ObjectMeta{Name: "default-deny", Namespace: "shop"},
				Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}},
			&rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: metav1.ObjectMeta{Name: "deploy", Namespace: "shop"},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get"}}}},
			&rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: "shop"},
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer"}}, RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "deploy"}},
			&rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: metav1.ObjectMeta{Name: "audit", Namespace: "shop"},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}}},
		},
		nodes: map[string]baseline.Node{
			"lab-worker":  {Labels: map[string]string{"kubernetes.io/hostname": "lab-worker"}},
			"lab-worker2": {Labels: map[string]string{"kubernetes.io/hostname": "lab-worker2"}},
		},
	}
}

func (w *world) snapshot(t *testing.T) *baseline.Snapshot {
	t.Helper()
	s := &baseline.Snapshot{Objects: map[string]baseline.Object{}, Nodes: map[string]baseline.Node{}}
	for _, o := range w.objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		obj := baseline.NewObject(&unstructured.Unstructured{Object: m}, true)
		s.Objects[obj.Key()] = obj
		s.Kinds = append(s.Kinds, obj.Kind)
	}
	s.Kinds = append(s.Kinds, "Pod", "HorizontalPodAutoscaler", "ClusterRoleBinding")
	for k, n := range w.nodes {
		s.Nodes[k] = n
	}
	return s
}

// find returns the world's object of kind and name, to be changed in place.
func (w *world) find(kind, name string) runtime.Object {
	for _, o := range w.objs {
		m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		u := unstructured.Unstructured{Object: m}
		if u.GetKind() == kind && u.GetName() == name {
			return o
		}
	}
	panic(kind + " " + name)
}

// taskScope is a task about web's Pods reached through Service web, and the deployer's permissions.
func taskScope() scenarios.Scope {
	return scenarios.Scope{
		Pods:       []scenarios.PodSelector{{Namespace: "shop", Selector: "app=web"}},
		Services:   []scenarios.ServiceRef{{Namespace: "shop", Name: "web"}},
		Subjects:   []scenarios.SubjectUse{{Name: "system:serviceaccount:shop:deployer", Namespace: "shop"}},
		Objects:    []string{"Service shop/web"},
		Namespaces: []string{"shop"},
	}
}

func outside(t *testing.T, scope scenarios.Scope, change func(w *world)) []string {
	t.Helper()
	w := newWorld()
	start := w.snapshot(t)
	change(w)
	var out []string
	for _, r := range Outside(start, w.snapshot(t), scope) {
		out = append(out, describeChange(r))
	}
	return out
}

func TestOutsideFailsWhatTheTaskDoesNotInvolve(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(w *world)
		want   string
	}{
		{
			name:   "another Deployment of the namespace scaled to 0",
			change: func(w *world) { w.find("Deployment", "cache").(*appsv1.Deployment).Spec.Replicas = ptr.To[int32](0) },
			want:   "deployment cache -n shop changed (spec.replicas)",
		},
		{
			name: "the Service's selector loosened and the other Deployment scaled to 0",
			change: func(w *world) {
				w.find("Service", "web").(*corev1.Service).Spec.Selector = map[string]string{"tier": "front"}
				w.find("Deployment", "cache").(*appsv1.Deployment).Spec.Replicas = ptr.To[int32](0)
			},
			want: "deployment cache -n shop changed (spec.replicas)",
		},
		{
			name: "the namespace labelled",
			change: func(w *world) {
				w.find("Namespace", "shop").(*corev1.Namespace).Labels["team"] = "payments"
			},
			want: "namespace shop changed (metadata.labels.team)",
		},
		{
			name: "a node the task does not name tainted",
			change: func(w *world) {
				w.nodes["lab-worker2"] = baseline.Node{Labels: w.nodes["lab-worker2"].Labels, Taints: []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoExecute}}}
			},
			want: "node lab-worker2 changed (taints: dedicated=x:NoExecute added)",
		},
		{
			name: "a bare Pod left in another namespace",
			change: func(w *world) {
				w.objs = append(w.objs, &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "debug", Namespace: "default"}})
			},
			want: "pod debug -n default created",
		},
		{
			name:   "a ConfigMap no workload of the task reads",
			change: func(w *world) { w.find("ConfigMap", "cache-config").(*corev1.ConfigMap).Data["SIZE"] = "2" },
			want:   "configmap cache-config -n shop changed (data.SIZE)",
		},
		{
			name:   "a Role that binds no subject of the task",
			change: func(w *world) { w.find("Role", "audit").(*rbacv1.Role).Rules[0].Verbs = []string{"*"} },
			want:   "role audit -n shop changed (rules)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := outside(t, taskScope(), tc.change)
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("outside the task: %q, want [%q]", got, tc.want)
			}
		})
	}
}

func TestOutsidePassesWhatTheTaskInvolves(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scope  scenarios.Scope
		change func(w *world)
	}{
		{"the task's Deployment scaled and its image changed", taskScope(), func(w *world) {
			d := w.find("Deployment", "web").(*appsv1.Deployment)
			d.Spec.Replicas = ptr.To[int32](3)
			d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
		}},
		{"the ConfigMap its Pods read", taskScope(), func(w *world) { w.find("ConfigMap", "web-config").(*corev1.ConfigMap).Data["MODE"] = "dev" }},
		{"the NetworkPolicy selecting its Pods", taskScope(), func(w *world) {
			w.find("NetworkPolicy", "default-deny").(*networkingv1.NetworkPolicy).Spec.PolicyTypes = nil
		}},
		{"a new NetworkPolicy in the task's namespace", taskScope(), func(w *world) {
			w.objs = append(w.objs, &networkingv1.NetworkPolicy{TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"}, ObjectMeta: metav1.ObjectMeta{Name: "allow-web", Namespace: "shop"}})
		}},
		{"the Role bound to the task's subject", taskScope(), func(w *world) {
			w.find("Role", "deploy").(*rbacv1.Role).Rules[0].Verbs = []string{"get", "patch"}
		}},
		{"the namespace labelled where the scenario says a fix may", func() scenarios.Scope {
			s := taskScope()
			s.MayChange = []scenarios.MayChange{{Kind: "Namespace", Name: "shop", Why: "a policy selects it by label"}}
			return s
		}(), func(w *world) { w.find("Namespace", "shop").(*corev1.Namespace).Labels["team"] = "payments" }},
		{"the node lifecycle's own taints", taskScope(), func(w *world) {
			w.nodes["lab-worker2"] = baseline.Node{Labels: w.nodes["lab-worker2"].Labels, Taints: []corev1.Taint{{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoSchedule}}}
		}},
		{"a Deployment an autoscaler scales", taskScope(), func(w *world) {
			w.find("Deployment", "cache").(*appsv1.Deployment).Spec.Replicas = ptr.To[int32](5)
			hpa := &autoscalingv2.HorizontalPodAutoscaler{TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"}, ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "shop"},
				Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "cache"}, MaxReplicas: 5}}
			w.objs = append(w.objs, hpa)
		}},
		{"a debug Pod that ran to its end", taskScope(), func(w *world) {
			w.objs = append(w.objs, &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "node-debugger", Namespace: "default"},
				Status: corev1.PodStatus{Phase: corev1.PodSucceeded}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := outside(t, tc.scope, tc.change); len(got) != 0 {
				t.Errorf("outside the task: %s", strings.Join(got, "; "))
			}
		})
	}
}
