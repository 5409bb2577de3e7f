package exam

import (
	"errors"
	"strings"
	"testing"

	"github.com/cka-lab/lab/internal/manifest"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cka-lab/lab/scenarios"
)

func TestConfineBindsTheNamespaceVar(t *testing.T) {
	cat := builtin(t)
	for _, id := range []string{"bad-image-tag", "readiness-probe-wrong-path", "init-missing-config-key", "rbac-deployer-create"} {
		sc, err := cat.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		for seed := range int64(5) {
			inst, err := Confine(sc, seed, Nodeless{}, "lab-alice")
			if err != nil {
				t.Fatalf("%s seed %d: %v", id, seed, err)
			}
			if inst.Values["ns"] != "lab-alice" {
				t.Errorf("%s: ns = %q, want lab-alice", id, inst.Values["ns"])
			}
			if !strings.Contains(inst.Task, "namespace lab-alice") {
				t.Errorf("%s: the task does not name the learner's namespace:\n%s", id, inst.Task)
			}
			for _, obj := range manifestObjects(t, inst) {
				if obj.GetKind() == "Namespace" {
					t.Errorf("%s: still creates Namespace %s", id, obj.GetName())
				}
				if obj.GetNamespace() != "lab-alice" {
					t.Errorf("%s: %s %s is outside lab-alice", id, obj.GetKind(), manifest.Name(obj))
				}
			}
			other, err := Confine(sc, seed, Nodeless{}, "lab-bob")
			if err != nil {
				t.Fatal(err)
			}
			for name, v := range inst.Values {
				if name != "ns" && other.Values[name] != v {
					t.Errorf("%s: var %s differs between learners of one seed: %q and %q", id, name, v, other.Values[name])
				}
			}
		}
	}
}

func TestConfineBindsTheNamespaceWhenAnotherVarSharesItsValue(t *testing.T) {
	sc, err := builtin(t).Get("bad-image-tag")
	if err != nil {
		t.Fatal(err)
	}
	for seed := range int64(200) {
		values, err := sc.Choose(seed, Nodeless{})
		if err != nil {
			t.Fatal(err)
		}
		if values["ns"] != values["app"] {
			continue
		}
		inst, err := Confine(sc, seed, Nodeless{}, "lab-alice")
		if err != nil {
			t.Fatalf("seed %d (namespace and Deployment both %s): %v", seed, values["ns"], err)
		}
		if inst.Values["ns"] != "lab-alice" || inst.Values["app"] != values["app"] {
			t.Errorf("seed %d: ns %q, app %q; want lab-alice, %s", seed, inst.Values["ns"], inst.Values["app"], values["app"])
		}
		return
	}
	t.Fatal("no seed below 200 names the namespace and the Deployment alike")
}

func TestConfineRefusesWhatReachesBeyondANamespace(t *testing.T) {
	cat := builtin(t)
	for id, why := range map[string]string{
		"taint-dedicated-node":   "var node: lab reaches no node from a learner's namespace",
		"cni-plugin-missing":     "lab reaches no node from a learner's namespace",
		"webhook-require-limits": "it reaches beyond its namespace (a webhook fault)",
	} {
		sc, err := cat.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Confine(sc, 1, Nodeless{}, "lab-alice")
		var refused *RefusedError
		prefix := "scenario " + id + " cannot run in a namespace of a shared cluster: "
		if !errors.As(err, &refused) || refused.Scenario != id || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(refused.Reason, why) {
			t.Errorf("%s: error %v, want a refusal containing %q", id, err, why)
		}
	}
}

func TestConfineRefusesAFixedNamespace(t *testing.T) {
	base, err := builtin(t).Get("bad-image-tag")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse(base.File, []byte(strings.ReplaceAll(string(base.Source), "${ns}", "kube-public")))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Confine(sc, 1, Nodeless{}, "lab-alice")
	if err == nil || !strings.Contains(err.Error(), "its namespace kube-public is fixed") {
		t.Errorf("error %v, want the fixed namespace named", err)
	}
}

func manifestObjects(t *testing.T, inst *scenarios.Instance) []*unstructured.Unstructured {
	t.Helper()
	manifests := append([]string(nil), inst.Setup...)
	for _, f := range inst.Faults {
		if f.Apply != nil {
			manifests = append(manifests, f.Apply.Manifest)
		}
	}
	var out []*unstructured.Unstructured
	for _, m := range manifests {
		objs, err := manifest.Decode([]byte(m))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, objs...)
	}
	return out
}
