package grader

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/journey"
	"github.com/cka-lab/lab/kube"
)

func init() {
	Register("admittedField", admittedField)
}

// admittedField creates args.manifest (one object) with a server-side dry run and reads args.path (kubectl
// JSONPath) of the object the API server would store: what mutating admission made of it. It passes when the
// value equals args.equals.
func admittedField(ctx context.Context, e Env, args map[string]string) Result {
	objs, err := kube.Decode([]byte(args["manifest"]))
	if err != nil || len(objs) != 1 {
		return e.fail("admittedField needs one object in its manifest: %v", err)
	}
	o := objs[0]
	ri, err := e.Clients.Resource(o.GroupVersionKind(), o.GetNamespace())
	if err != nil {
		return e.fail("%v", err)
	}
	what := fmt.Sprintf("creating %s %s (dry run)", o.GetKind(), kube.Name(o))
	stored, err := ri.Create(ctx, o, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return Result{Evidence: fmt.Sprintf("%s: %v", what, err), Stage: stageOfAPIError(err.Error())}
	}
	got, err := jsonPath(stored.Object, args["path"])
	if err != nil {
		return e.fail("read %s: %v", args["path"], err)
	}
	if got != args["equals"] {
		return Result{Evidence: fmt.Sprintf("%s: admission makes %s %q, want %q", what, args["path"], got, args["equals"]), Stage: journey.Admission}
	}
	return pass("%s: admission makes %s %q", what, args["path"], got)
}
