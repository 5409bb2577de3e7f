package webhook

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
)

func sidecarPolicy(t *testing.T) Mutator {
	t.Helper()
	p, err := ParsePolicy("inject-sidecar:busybox:1.36")
	if err != nil {
		t.Fatal(err)
	}
	m, ok := p.(Mutator)
	if !ok {
		t.Fatalf("inject-sidecar is not a Mutator")
	}
	return m
}

func TestSidecarPatch(t *testing.T) {
	m := sidecarPolicy(t)
	if m.Name() != "inject-sidecar:busybox:1.36" {
		t.Errorf("name %q", m.Name())
	}
	if ok, msg := m.Review(admissionRequest(t, "", "Pod", pod(nil, containers(ctr("web", "nginx"))))); !ok {
		t.Errorf("the injector must not deny: %s", msg)
	}
	patch, err := m.Mutate(admissionRequest(t, "", "Pod", pod(nil, containers(ctr("web", "nginx")))))
	if err != nil {
		t.Fatal(err)
	}
	var ops []struct {
		Op    string           `json:"op"`
		Path  string           `json:"path"`
		Value corev1.Container `json:"value"`
	}
	if err := json.Unmarshal(patch, &ops); err != nil {
		t.Fatalf("patch %s: %v", patch, err)
	}
	if len(ops) != 1 || ops[0].Op != "add" || ops[0].Path != "/spec/containers/-" || ops[0].Value.Name != SidecarName || ops[0].Value.Image != "busybox:1.36" {
		t.Errorf("patch = %s, want one add of the %s container with busybox:1.36", patch, SidecarName)
	}
}

func TestSidecarLeavesAlone(t *testing.T) {
	m := sidecarPolicy(t)
	optOut := pod(nil, containers(ctr("web", "nginx")))
	optOut.Annotations = map[string]string{SidecarOptOutAnnot: "false"}
	update := admissionRequest(t, "", "Pod", pod(nil, containers(ctr("web", "nginx"))))
	update.Operation = admissionv1.Update
	for name, req := range map[string]*admissionv1.AdmissionRequest{
		"opted out":       admissionRequest(t, "", "Pod", optOut),
		"already has one": admissionRequest(t, "", "Pod", pod(nil, containers(ctr("web", "nginx"), ctr(SidecarName, "busybox:1.36")))),
		"an update":       update,
		"a Deployment":    admissionRequest(t, "apps", "Deployment", deployment(nil, nil, containers(ctr("web", "nginx")))),
	} {
		if patch, err := m.Mutate(req); err != nil || patch != nil {
			t.Errorf("%s: patch %s, err %v; want neither", name, patch, err)
		}
	}
}

func TestParseSidecarPolicy(t *testing.T) {
	for _, bad := range []string{"inject-sidecar", "inject-sidecar:", "inject-sidecar:Not An Image"} {
		if _, err := ParsePolicy(bad); err == nil {
			t.Errorf("ParsePolicy(%q) accepted", bad)
		}
	}
	for spec, want := range map[string]bool{"inject-sidecar:busybox:1.36": true, "require-limits": false} {
		if got, err := Mutates(spec); err != nil || got != want {
			t.Errorf("Mutates(%s) = %v, %v; want %v", spec, got, err, want)
		}
	}
}

func TestMutatingObjects(t *testing.T) {
	p := testParams(t)
	p.Policy, p.Mutating = "inject-sidecar:busybox:1.36", true
	objs, err := Objects(p)
	if err != nil {
		t.Fatal(err)
	}
	mwc, ok := objs[len(objs)-1].(*admissionregistrationv1.MutatingWebhookConfiguration)
	if !ok || len(mwc.Webhooks) != 1 {
		t.Fatalf("last object is %T, want a MutatingWebhookConfiguration with one webhook", objs[len(objs)-1])
	}
	wh := mwc.Webhooks[0]
	if *wh.ClientConfig.Service.Path != "/mutate" || *wh.FailurePolicy != admissionregistrationv1.Fail || wh.NamespaceSelector.MatchLabels["lab.cka/webhook"] != "on" {
		t.Errorf("webhook path=%s failurePolicy=%s selector=%v", *wh.ClientConfig.Service.Path, *wh.FailurePolicy, wh.NamespaceSelector)
	}
	if r := wh.Rules; len(r) != 1 || r[0].Resources[0] != "pods" || len(r[0].Operations) != 1 || r[0].Operations[0] != admissionregistrationv1.Create {
		t.Errorf("rules = %+v, want Pod creates only", r)
	}

	p.Mutating = false
	if _, err := Objects(p); err == nil {
		t.Error("a mutating policy in a validating configuration was accepted")
	}
	p.Policy, p.Mutating = "require-limits", true
	if _, err := Objects(p); err == nil {
		t.Error("a validating policy in a mutating configuration was accepted")
	}
}

func TestHandlerMutates(t *testing.T) {
	c := testCerts(t)
	srv := startTLSServer(t, "inject-sidecar:busybox:1.36", c, io.Discard)
	client := caClient(t, c, testHost)
	body := reviewBody(t, admissionRequest(t, "", "Pod", pod(nil, containers(ctr("web", "nginx")))))
	resp, err := postJSON(t, client, srv.URL+"/mutate", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, decode %v", resp.StatusCode, err)
	}
	r := out.Response
	if r == nil || !r.Allowed || r.PatchType == nil || *r.PatchType != admissionv1.PatchTypeJSONPatch || !strings.Contains(string(r.Patch), SidecarName) {
		t.Errorf("response = %+v, want an allowed JSON patch adding %s", r, SidecarName)
	}

	plain := startTLSServer(t, "require-limits", c, io.Discard)
	resp, err = postJSON(t, client, plain.URL+"/mutate", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Error("a validating policy answered /mutate")
	}
}
