package workspace

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"

	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/scenarios"
)

// fixedMapper is a RESTMapper that knows Deployments, for a fake cluster without discovery.
type fixedMapper struct{ meta.RESTMapper }

func (fixedMapper) Reset() {}

// failingProxy answers a Service proxy request as the API server does for a Service without Ready endpoints.
type failingProxy struct{ err error }

func (p failingProxy) DoRaw(context.Context) ([]byte, error)         { return nil, p.err }
func (p failingProxy) Stream(context.Context) (io.ReadCloser, error) { return nil, p.err }

// TestGradeJudgesTheLearnersNamespace grades bad-image-tag in a learner's namespace of a fake cluster: the
// checks are the ones the learner's lab ran there (the same instance, confined to the same namespace), each
// judged from what the cluster holds, with evidence for a failure.
func TestGradeJudgesTheLearnersNamespace(t *testing.T) {
	cat, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := cat.Get("bad-image-tag")
	if err != nil {
		t.Fatal(err)
	}
	const seed, ns = 7, "lab-alice"
	inst, err := exam.Confine(sc, seed, exam.Nodeless{}, ns)
	if err != nil {
		t.Fatal(err)
	}
	app := inst.Values["app"]
	fixed := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": app, "namespace": ns},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": "nginx:1.27"}}}}}}}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{deployments: "DeploymentList"}, fixed)
	kc := fake.NewClientset()
	kc.PrependProxyReactor("services", func(k8stesting.Action) (bool, rest.ResponseWrapper, error) {
		return true, failingProxy{errors.New(`no endpoints available for service "` + app + `"`)}, nil
	})
	p := &Provisioner{Kube: kc, Catalog: cat, Clients: &kube.Clients{Kube: kc, Dynamic: dyn, Mapper: fixedMapper{mapper}}}

	checks, err := p.Grade(context.Background(), ns, "bad-image-tag", seed)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != len(inst.Checks)+len(inst.Collateral) {
		t.Fatalf("graded %d checks, want the instance's %d", len(checks), len(inst.Checks)+len(inst.Collateral))
	}
	byName := map[string]bool{}
	for i, c := range checks {
		byName[c.Name] = c.Passed
		if !c.Passed && !strings.Contains(c.Evidence, ns) {
			t.Errorf("check %d %q failed with evidence %q, which does not name %s", i, c.Name, c.Evidence, ns)
		}
	}
	if !byName["the Deployment runs nginx:1.27"] {
		t.Errorf("the learner's fixed Deployment was not seen: %+v", checks)
	}
	if pods := "2 Pods of " + app + " are Running and Ready"; byName[pods] {
		t.Errorf("%q passed on a namespace without Pods: %+v", pods, checks)
	}
	if !checks[len(checks)-1].Collateral {
		t.Errorf("the Service check is not marked collateral: %+v", checks[len(checks)-1])
	}
	if _, err := p.Grade(context.Background(), ns, "taint-dedicated-node", seed); err == nil {
		t.Error("a scenario that reaches a node was graded in a namespace")
	}
}
