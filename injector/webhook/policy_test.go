package webhook

import (
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const testNS = "team-a"

// admissionRequest wraps obj the way the API server does for a CREATE.
func admissionRequest(t *testing.T, group, kind string, obj any) *admissionv1.AdmissionRequest {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("marshal %s: %v", kind, err)
	}
	return &admissionv1.AdmissionRequest{
		UID:       "uid-1",
		Kind:      metav1.GroupVersionKind{Group: group, Version: "v1", Kind: kind},
		Namespace: testNS,
		Name:      "web",
		Operation: admissionv1.Create,
		Object:    runtime.RawExtension{Raw: raw},
	}
}

// ctr returns a container; limits lists which of "cpu" and "memory" to set.
func ctr(name, image string, limits ...corev1.ResourceName) corev1.Container {
	c := corev1.Container{Name: name, Image: image}
	for _, l := range limits {
		if c.Resources.Limits == nil {
			c.Resources.Limits = corev1.ResourceList{}
		}
		c.Resources.Limits[l] = resource.MustParse("1")
	}
	return c
}

var (
	cpu    = corev1.ResourceCPU
	memory = corev1.ResourceMemory
)

func pod(labels map[string]string, spec corev1.PodSpec) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels}, Spec: spec}
}

func deployment(labels, podLabels map[string]string, spec corev1.PodSpec) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
			Spec:       spec,
		}},
	}
}

func containers(cs ...corev1.Container) corev1.PodSpec { return corev1.PodSpec{Containers: cs} }

type reviewCase struct {
	name    string
	req     *admissionv1.AdmissionRequest
	allowed bool
	message string // exact expected message when denied
}

func runReviews(t *testing.T, spec string, cases []reviewCase) {
	t.Helper()
	p, err := ParsePolicy(spec)
	if err != nil {
		t.Fatalf("ParsePolicy(%q): %v", spec, err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			allowed, msg := p.Review(tc.req)
			if allowed != tc.allowed || msg != tc.message {
				t.Errorf("Review() = %v, %q\nwant       %v, %q", allowed, msg, tc.allowed, tc.message)
			}
		})
	}
}

func TestRequireLimits(t *testing.T) {
	const rule = "every container in namespace team-a must set resources.limits.cpu and resources.limits.memory (policy require-limits)"
	limited := ctr("web", "nginx", cpu, memory)
	deleteReq := admissionRequest(t, "", "Pod", pod(nil, containers()))
	deleteReq.Operation, deleteReq.Object = admissionv1.Delete, runtime.RawExtension{}
	scaleReq := admissionRequest(t, "apps", "Deployment", map[string]any{"spec": map[string]any{"replicas": 3}})
	scaleReq.SubResource = "scale"
	job := &batchv1.Job{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: containers(ctr("run", "busybox", memory))}}}
	cron := &batchv1.CronJob{Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: job.Spec}}}
	sts := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Template: corev1.PodTemplateSpec{Spec: containers(ctr("db", "postgres"))}}}

	runReviews(t, "require-limits", []reviewCase{
		{"pod with limits", admissionRequest(t, "", "Pod", pod(nil, containers(limited))), true, ""},
		{"pod without memory limit", admissionRequest(t, "", "Pod", pod(nil, containers(ctr("web", "nginx", cpu)))),
			false, `container "web" has no memory limit: ` + rule},
		{"init container without cpu limit", admissionRequest(t, "", "Pod", pod(nil, corev1.PodSpec{
			InitContainers: []corev1.Container{ctr("init", "busybox", memory)},
			Containers:     []corev1.Container{limited},
		})), false, `init container "init" has no cpu limit: ` + rule},
		{"deployment with limits", admissionRequest(t, "apps", "Deployment", deployment(nil, nil, containers(limited))), true, ""},
		{"deployment second container without limits", admissionRequest(t, "apps", "Deployment",
			deployment(nil, nil, containers(limited, ctr("sidecar", "envoy")))),
			false, `container "sidecar" has no cpu or memory limit: ` + rule},
		{"statefulset", admissionRequest(t, "apps", "StatefulSet", sts), false, `container "db" has no cpu or memory limit: ` + rule},
		{"job", admissionRequest(t, "batch", "Job", job), false, `container "run" has no cpu limit: ` + rule},
		{"cronjob", admissionRequest(t, "batch", "CronJob", cron), false, `container "run" has no cpu limit: ` + rule},
		{"configmap is not a workload", admissionRequest(t, "", "ConfigMap", &corev1.ConfigMap{}), true, ""},
		{"delete carries no object", deleteReq, true, ""},
		{"scale subresource", scaleReq, true, ""},
	})
}

func TestUndecodableObjectIsDenied(t *testing.T) {
	p, err := ParsePolicy("require-limits")
	if err != nil {
		t.Fatal(err)
	}
	allowed, msg := p.Review(&admissionv1.AdmissionRequest{
		Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: testNS, Name: "web",
		Object: runtime.RawExtension{Raw: []byte(`{"spec":5}`)},
	})
	if allowed || !strings.HasPrefix(msg, "cannot decode Pod team-a/web: ") || !strings.HasSuffix(msg, "(policy require-limits)") {
		t.Errorf("Review() = %v, %q; want a denial explaining the decode failure", allowed, msg)
	}
}

func TestRequireLabel(t *testing.T) {
	team := map[string]string{"team": "a"}
	generated := pod(nil, containers())
	generated.Name, generated.GenerateName = "", "web-7d4b9-"

	runReviews(t, "require-label:team", []reviewCase{
		{"labelled pod", admissionRequest(t, "", "Pod", pod(team, containers())), true, ""},
		{"unlabelled pod", admissionRequest(t, "", "Pod", pod(nil, containers())),
			false, `Pod "web" has no label "team": every object in namespace team-a must carry it (policy require-label:team)`},
		{"pod from a controller", admissionRequest(t, "", "Pod", generated),
			false, `Pod "web-7d4b9-" has no label "team": every object in namespace team-a must carry it (policy require-label:team)`},
		{"labelled deployment and template", admissionRequest(t, "apps", "Deployment", deployment(team, team, containers())), true, ""},
		{"unlabelled pod template", admissionRequest(t, "apps", "Deployment", deployment(team, nil, containers())),
			false, `the pod template of Deployment "web" has no label "team": pods in namespace team-a must carry it too (policy require-label:team)`},
		{"unlabelled configmap", admissionRequest(t, "", "ConfigMap", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}}),
			false, `ConfigMap "cfg" has no label "team": every object in namespace team-a must carry it (policy require-label:team)`},
	})
}

func TestDenyPrivileged(t *testing.T) {
	yes, no := true, false
	privileged := ctr("web", "nginx")
	privileged.SecurityContext = &corev1.SecurityContext{Privileged: &yes}
	unprivileged := ctr("web", "nginx")
	unprivileged.SecurityContext = &corev1.SecurityContext{Privileged: &no}

	runReviews(t, "deny-privileged", []reviewCase{
		{"plain pod", admissionRequest(t, "", "Pod", pod(nil, containers(ctr("web", "nginx")))), true, ""},
		{"privileged false", admissionRequest(t, "", "Pod", pod(nil, containers(unprivileged))), true, ""},
		{"privileged deployment", admissionRequest(t, "apps", "Deployment", deployment(nil, nil, containers(privileged))),
			false, `container "web" is privileged: containers in namespace team-a may not set securityContext.privileged (policy deny-privileged)`},
		{"hostNetwork pod", admissionRequest(t, "", "Pod", pod(nil, corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{unprivileged}})),
			false, `Pod "web" uses hostNetwork: pods in namespace team-a may not share the node's network namespace (policy deny-privileged)`},
	})
}

func TestAllowedRegistries(t *testing.T) {
	const spec = "allowed-registries:registry.k8s.io/, docker.io/library/"
	const name = "allowed-registries:registry.k8s.io/,docker.io/library/"
	runReviews(t, spec, []reviewCase{
		{"official hub image", admissionRequest(t, "", "Pod", pod(nil, containers(ctr("web", "nginx:1.27")))), true, ""},
		{"allowed registry", admissionRequest(t, "apps", "Deployment",
			deployment(nil, nil, containers(ctr("pause", "registry.k8s.io/pause:3.10")))), true, ""},
		{"hub user image", admissionRequest(t, "apps", "Deployment", deployment(nil, nil, containers(ctr("web", "bitnami/nginx")))),
			false, `container "web" uses image "bitnami/nginx" (docker.io/bitnami/nginx): images in namespace team-a must start with registry.k8s.io/ or docker.io/library/ (policy ` + name + `)`},
		{"other registry in init container", admissionRequest(t, "", "Pod", pod(nil, corev1.PodSpec{
			InitContainers: []corev1.Container{ctr("init", "ghcr.io/acme/init:v1")},
			Containers:     []corev1.Container{ctr("web", "nginx")},
		})), false, `init container "init" uses image "ghcr.io/acme/init:v1": images in namespace team-a must start with registry.k8s.io/ or docker.io/library/ (policy ` + name + `)`},
	})
}

func TestNormaliseImage(t *testing.T) {
	for in, want := range map[string]string{
		"nginx":                            "docker.io/library/nginx",
		"nginx:1.27":                       "docker.io/library/nginx:1.27",
		"nginx@sha256:abc":                 "docker.io/library/nginx@sha256:abc",
		"bitnami/nginx:1":                  "docker.io/bitnami/nginx:1",
		"docker.io/nginx":                  "docker.io/library/nginx",
		"index.docker.io/library/nginx":    "docker.io/library/nginx",
		"registry.k8s.io/pause:3.10":       "registry.k8s.io/pause:3.10",
		"localhost/app":                    "localhost/app",
		"localhost:5000/app":               "localhost:5000/app",
		"lab.local/lab-webhook:0123456789": "lab.local/lab-webhook:0123456789",
	} {
		if got := normaliseImage(in); got != want {
			t.Errorf("normaliseImage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParsePolicy(t *testing.T) {
	for in, want := range map[string]string{
		"require-limits":                "require-limits",
		" deny-privileged ":             "deny-privileged",
		"require-label:team":            "require-label:team",
		"require-label:example.com/app": "require-label:example.com/app",
		"allowed-registries:a/, b/":     "allowed-registries:a/,b/",
	} {
		p, err := ParsePolicy(in)
		if err != nil {
			t.Errorf("ParsePolicy(%q): %v", in, err)
			continue
		}
		if p.Name() != want {
			t.Errorf("ParsePolicy(%q).Name() = %q, want %q", in, p.Name(), want)
		}
	}
	for in, want := range map[string]string{
		"":                       "no webhook policy given",
		"require-quota":          `unknown webhook policy "require-quota"`,
		"require-limits:cpu":     `"require-limits" takes no argument`,
		"require-label":          `invalid label key ""`,
		"require-label:bad key":  `invalid label key "bad key"`,
		"allowed-registries:":    "empty prefix",
		"allowed-registries:a,,": "empty prefix",
	} {
		_, err := ParsePolicy(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePolicy(%q) error = %v, want it to contain %q", in, err, want)
		}
	}
	if _, err := ParsePolicy("nope"); !strings.Contains(err.Error(), policyUsage) {
		t.Errorf("unknown policy error %q does not list the known policies", err)
	}
}
