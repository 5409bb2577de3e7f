package evidence

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	restclient "k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/scenarios"
)

// The fixtures are what a lab cluster (Kubernetes v1.35) made of testdata/broken.yaml, recorded by
// hack/journey-fixtures.sh: real Pods, events, EndpointSlices and conditions, read back through a fake
// clientset. The two things a fake cannot answer are stubbed with what the cluster answered: the API
// server's Pod proxy (a refused port) and the containers' logs ("fake logs").

// load decodes the Lists of the fixture files.
func load(t *testing.T, files ...string) []runtime.Object {
	t.Helper()
	var out []runtime.Object
	for _, f := range files {
		data, err := os.Open(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(data, 4096)
		for {
			var list corev1.List
			if err := dec.Decode(&list); err != nil {
				break
			}
			for _, item := range list.Items {
				obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(item.Raw, nil, nil)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				out = append(out, obj)
			}
		}
		_ = data.Close()
	}
	if len(out) == 0 {
		t.Fatalf("no objects in %v", files)
	}
	return out
}

// capturedAt is just after the newest event of the fixtures: restarts are judged against it.
func capturedAt(objs []runtime.Object) time.Time {
	var at time.Time
	for _, o := range objs {
		if e, ok := o.(*corev1.Event); ok && eventTime(e).After(at) {
			at = eventTime(e)
		}
	}
	return at.Add(5 * time.Second)
}

func eventTime(e *corev1.Event) time.Time {
	if e.Series != nil {
		return e.Series.LastObservedTime.Time
	}
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	return e.EventTime.Time
}

// proxyAnswer is the API server's Pod proxy as the cluster answered: port 80 serves nginx, anything else is
// refused.
type proxyAnswer struct{ port string }

func (p proxyAnswer) DoRaw(context.Context) ([]byte, error) {
	if p.port == "80" {
		return []byte("<title>Welcome to nginx!</title>"), nil
	}
	return []byte("error trying to reach service: dial tcp 10.244.1.7:" + p.port + ": connect: connection refused"),
		errors.New("the server is currently unable to handle the request")
}

func (p proxyAnswer) Stream(context.Context) (io.ReadCloser, error) {
	return nil, errors.New("not streamed")
}

func clientset(t *testing.T, files ...string) *fake.Clientset {
	objs := load(t, files...)
	cs := fake.NewClientset(objs...)
	cs.AddProxyReactor("pods", func(a k8stesting.Action) (bool, restclient.ResponseWrapper, error) {
		return true, proxyAnswer{a.(k8stesting.ProxyGetAction).GetPort()}, nil
	})
	at := capturedAt(objs)
	now = func() time.Time { return at }
	t.Cleanup(func() { now = time.Now })
	return cs
}

func TestExplainWorkloadsBrokenByHand(t *testing.T) {
	tests := []struct {
		target   Target
		stage    journey.Stage
		evidence string
		// waiting are stages before the stop that never ran.
		waiting []journey.Stage
		note    string
	}{
		{target: Target{Kind: "deployment", Name: "secret-missing"}, stage: journey.Volumes,
			evidence: `FailedMount: MountVolume.SetUp failed for volume "tls" : secret "web-tls" not found`},
		{target: Target{Kind: "deployment", Name: "bad-image"}, stage: journey.Image, evidence: `(image "nginx:1.27.99")`},
		{target: Target{Kind: "pod", Name: "init-fails"}, stage: journey.Init, evidence: "Init:0/1: "},
		{target: Target{Kind: "deployment", Name: "unschedulable"}, stage: journey.Scheduling, evidence: "didn't match Pod's node affinity/selector"},
		{target: Target{Kind: "deployment", Name: "not-ready"}, stage: journey.Readiness, evidence: "Readiness probe failed: HTTP probe failed with statuscode: 404"},
		{target: Target{Kind: "deployment", Name: "liveness"}, stage: journey.Readiness, evidence: "Liveness probe failed"},
		{target: Target{Kind: "deployment", Name: "env-key"}, stage: journey.Container, evidence: "CreateContainerConfigError: couldn't find key colour in ConfigMap shop/settings"},
		{target: Target{Kind: "deployment", Name: "claim"}, stage: journey.Volumes, evidence: `storageclass.storage.k8s.io "fast" not found`,
			waiting: []journey.Stage{journey.Scheduling, journey.Kubelet}},
		{target: Target{Kind: "statefulset", Name: "db"}, stage: journey.Image, evidence: `(image "busybox:9.9")`},
		{target: Target{Kind: "daemonset", Name: "agent"}, stage: journey.Scheduling, evidence: "daemonset/agent desires 0 Pods"},
		{target: Target{Kind: "job", Name: "backup"}, stage: journey.App, evidence: "container backup exited Error (exit code 3)"},
		{target: Target{Kind: "deployment", Name: "rollout"}, stage: journey.Readiness, evidence: "Readiness probe failed",
			note: "Progressing=False (ProgressDeadlineExceeded)"},
		{target: Target{Kind: "deployment", Name: "lonely"}, stage: journey.Service, evidence: "Service lonely selects app=lonly"},
		{target: Target{Kind: "deployment", Name: "wrong-port"}, stage: journey.Service, evidence: "Service wrong-port sends port 80 to targetPort 8080; a connection to"},
		{target: Target{Kind: "deployment", Name: "fenced"}, stage: journey.NetworkPolicy,
			evidence: "networkpolicy/fenced-from-frontend allows ingress to port 80/TCP only from Pods app=frontend in namespace shop; no Pod matches"},
		{target: Target{Kind: "deployment", Name: "egress-locked"}, stage: journey.NetworkPolicy, evidence: "allows no egress to port 53"},
		{target: Target{Kind: "deployment", Name: "no-dns"}, stage: journey.DNS, evidence: "spec.dnsPolicy None, spec.dnsConfig.nameservers [192.0.2.53]"},
		{target: Target{Kind: "deployment", Name: "healthy"}},
		{target: Target{Selector: "app=bad-image"}, stage: journey.Image, evidence: `(image "nginx:1.27.99")`},
		{target: Target{Selector: "app=healthy", Service: "healthy"}},
	}
	kc := clientset(t, "shop.yaml", "cluster.yaml")
	for _, tc := range tests {
		tc.target.Namespace = "shop"
		t.Run(tc.target.String(), func(t *testing.T) {
			ex, err := Explain(t.Context(), nil, kc, tc.target)
			if err != nil {
				t.Fatal(err)
			}
			if ex.Stopped != tc.stage || !strings.Contains(ex.Evidence, tc.evidence) {
				t.Fatalf("stopped at %q with %q; want %q with %q", ex.Stopped, ex.Evidence, tc.stage, tc.evidence)
			}
			for _, h := range ex.Handoffs {
				want := journey.Passed
				switch {
				case h.Stage == tc.stage:
					want = journey.Failed
				case tc.stage != "" && h.Stage.Index() > tc.stage.Index(), slices.Contains(tc.waiting, h.Stage):
					want = journey.NotReached
				case h.Status == journey.Skipped:
					want = journey.Skipped
				}
				if h.Status != want {
					t.Errorf("%s: %s (%s), want %s", h.Stage, h.Status, h.Detail, want)
				}
			}
			if tc.note != "" && (len(ex.Notes) == 0 || !strings.Contains(ex.Notes[0], tc.note)) {
				t.Errorf("notes %q, want one with %q", ex.Notes, tc.note)
			}
		})
	}
}

func TestExplainHealthyWorkloadSeesItsService(t *testing.T) {
	ex, err := Explain(t.Context(), nil, clientset(t, "shop.yaml", "cluster.yaml"), Target{Kind: "deployment", Namespace: "shop", Name: "healthy"})
	if err != nil {
		t.Fatal(err)
	}
	h := ex.Handoffs[journey.Service.Index()]
	if h.Status != journey.Passed || h.Detail != "Service healthy has 2 ready endpoint(s)" {
		t.Errorf("service handoff %+v", h)
	}
	if !strings.HasPrefix(ex.Subject, "deployment/healthy in namespace shop (Pod healthy-") {
		t.Errorf("subject %q", ex.Subject)
	}
}

func TestExplainWithCoreDNSDown(t *testing.T) {
	ex, err := Explain(t.Context(), nil, clientset(t, "shop.yaml", "dns-down.yaml"), Target{Kind: "deployment", Namespace: "shop", Name: "healthy"})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Stopped != journey.DNS || ex.Evidence != "Service kube-system/kube-dns has 0 ready endpoints; no CoreDNS Pod exists" {
		t.Errorf("stopped at %q: %q", ex.Stopped, ex.Evidence)
	}
}

func TestExplainRefusesWhatIsNotThere(t *testing.T) {
	kc := clientset(t, "shop.yaml", "cluster.yaml")
	for _, tc := range []struct {
		target Target
		want   string
	}{
		{Target{Kind: "pod", Namespace: "shop", Name: "nope"}, `pod "nope" not found in namespace shop (kubectl get pods -n shop lists what is there)`},
		{Target{Kind: "deployment", Namespace: "shop", Name: "nope"}, `deployment "nope" not found in namespace shop (kubectl get deploy -n shop lists what is there)`},
		{Target{Kind: "job", Namespace: "elsewhere", Name: "backup"}, `job "backup" not found in namespace elsewhere (kubectl get jobs -n elsewhere lists what is there)`},
	} {
		_, err := Explain(t.Context(), nil, kc, tc.target)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.target, err, tc.want)
		}
	}
}

func TestExplainOnlyReads(t *testing.T) {
	kc := clientset(t, "shop.yaml", "cluster.yaml")
	for _, name := range []string{"healthy", "rollout", "wrong-port", "fenced", "secret-missing"} {
		if _, err := Explain(t.Context(), nil, kc, Target{Kind: "deployment", Namespace: "shop", Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range kc.Actions() {
		switch a.GetVerb() {
		case "get", "list", "watch", "proxy":
		case "create":
			// An access review is asked, never stored.
			if a.GetResource().Resource == "subjectaccessreviews" {
				continue
			}
			fallthrough
		default:
			t.Errorf("explain changed the cluster: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

func TestScenarioTargetsAndExplainFirst(t *testing.T) {
	kc := clientset(t, "shop.yaml", "cluster.yaml")
	ex, err := ExplainFirst(t.Context(), nil, kc, []Target{
		{Namespace: "shop", Service: "missing"},        // not there yet: passed over
		{Namespace: "shop", Service: "healthy"},        // passes
		{Namespace: "shop", Service: "lonely"},         // its selector lost the Pods: the workload named like it
		{Namespace: "shop", Selector: "app=bad-image"}, // not reached: lonely stops first
	})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Stopped != journey.Service || !strings.Contains(ex.Evidence, "Service lonely selects app=lonly") {
		t.Errorf("stopped at %q: %q", ex.Stopped, ex.Evidence)
	}
	if !strings.HasPrefix(ex.Subject, "the Pods behind Service lonely in namespace shop (Pod lonely-") {
		t.Errorf("subject %q", ex.Subject)
	}
	ex, err = ExplainFirst(t.Context(), nil, kc, []Target{{Namespace: "shop", Service: "missing"}, {Namespace: "shop", Service: "healthy"}})
	if err != nil || ex.Stopped != "" || !strings.HasPrefix(ex.Subject, "the Pods behind Service healthy") {
		t.Errorf("every target passing shows the first that exists: %v %+v", err, ex)
	}
	if _, err := ExplainFirst(t.Context(), nil, kc, []Target{{Namespace: "shop", Service: "missing"}}); err == nil ||
		!strings.Contains(err.Error(), `service "missing" not found in namespace shop`) {
		t.Errorf("nothing to trace: %v", err)
	}
}

func TestScenarioTargetsFollowTheLearnersView(t *testing.T) {
	cat, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   string
		want []string
	}{
		// The Service's backends first, then the client the check runs wget in.
		{"service-wrong-targetport", []string{"the Pods behind Service ${app}", "Pods app=client"}},
		// The client whose lookups fail before the CoreDNS Pods that crash.
		{"coredns-corefile-typo", []string{"Pods app=client", "Pods k8s-app=kube-dns"}},
		{"bad-image-tag", []string{"the Pods behind Service ${app}", "Pods app=${app}"}},
		{"rbac-deployer-create", nil},
	} {
		sc, err := cat.Get(tc.id)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := sc.Instantiate(1, noNodes{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, target := range ScenarioTargets(inst) {
			got = append(got, strings.SplitN(target.String(), " in namespace", 2)[0])
		}
		want := make([]string, len(tc.want))
		for i, w := range tc.want {
			want[i] = strings.ReplaceAll(w, "${app}", inst.Values["app"])
		}
		if strings.Join(got, "; ") != strings.Join(want, "; ") {
			t.Errorf("%s: targets %q, want %q", tc.id, got, want)
		}
	}
}

// noNodes resolves the builtin vars of scenarios that reach no node.
type noNodes struct{}

func (noNodes) Nodes(string) ([]string, error)   { return nil, errors.New("no nodes") }
func (noNodes) CNIConfig(string) (string, error) { return "", errors.New("no nodes") }
func (noNodes) CNIPlugin(string) (string, error) { return "", errors.New("no nodes") }
func (noNodes) Builtin(name string) string       { return name }
