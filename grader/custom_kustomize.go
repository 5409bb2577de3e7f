package grader

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cka-lab/lab/internal/manifest"
)

func init() {
	Register("kustomizeApplied", kustomizeApplied)
}

// dryRunManager owns nothing, so its dry-run apply removes no field another manager set: it changes only what
// the rendered objects state otherwise.
const dryRunManager = "lab-grader-dry-run"

// kustomizeApplied: the Kustomize directory args.dir on args.node renders, and every object it renders is live as
// rendered, which the API server decides: a server-side dry-run apply of the object changes nothing. However the
// learner applied it (client-side, server-side, rendered and piped from elsewhere), the directory is the source
// of truth for what runs; an object changed by hand afterwards, or a directory that no longer renders, fails.
func kustomizeApplied(ctx context.Context, e Env, args map[string]string) Result {
	return sourceLive(ctx, e, args["node"], args["dir"], "renders", "kubectl", "kustomize", args["dir"])
}

// sourceLive runs argv on the node to print what a source states (a manifest file, a rendered Kustomize
// directory) and checks that every object it prints is live as stated; states is the source's verb in the
// evidence ("states", "renders").
func sourceLive(ctx context.Context, e Env, node, source, states string, argv ...string) Result {
	n, err := e.nodeNamed(node)
	if err != nil {
		return e.fail("%v", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := n.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SetStdout(&stdout)
	cmd.SetStderr(&stderr)
	if err := cmd.Run(); err != nil {
		return e.fail("`%s` on %s fails: %s", strings.Join(argv, " "), n, firstLine(stderr.String()))
	}
	objs, err := manifest.Decode(stdout.Bytes())
	if err != nil {
		return e.fail("what %s %s does not decode: %v", source, states, err)
	}
	if len(objs) == 0 {
		return e.fail("%s %s no objects", source, states)
	}
	if why := liveAsStated(ctx, e, objs, source+" "+states); why != "" {
		return e.fail("%s", why)
	}
	return pass("the %d objects %s %s are live as stated (a server-side dry-run apply changes nothing)", len(objs), source, states)
}

// liveAsStated says why the objects a source states (a rendered directory, a release's manifest) are not live
// as stated, or "" when they are: each exists, and a server-side dry-run apply of it changes nothing. The dry
// run validates fields strictly, as kubectl does: a field the API does not know would be dropped, so a source
// that states one does not say what runs.
func liveAsStated(ctx context.Context, e Env, objs []*unstructured.Unstructured, source string) string {
	for _, o := range objs {
		name := o.GetKind() + " " + manifest.Name(o)
		live, err := e.Clients.Get(ctx, o)
		if err != nil {
			return fmt.Sprintf("read %s: %v", name, err)
		}
		ri, err := e.Clients.Resource(o.GroupVersionKind(), o.GetNamespace())
		if err != nil {
			return err.Error()
		}
		if live == nil {
			where := ""
			if namespaced, err := e.Clients.Namespaced(o.GroupVersionKind()); err == nil && namespaced && o.GetNamespace() == "" {
				where = " (it names no namespace, so applying it as it is creates the object in default)"
			}
			return fmt.Sprintf("%s, which %s, is not in the cluster%s", name, source, where)
		}
		body, err := o.MarshalJSON()
		if err != nil {
			return fmt.Sprintf("encode %s: %v", name, err)
		}
		force := true
		applied, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
			FieldManager: dryRunManager, Force: &force, DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
		if err != nil {
			return fmt.Sprintf("a dry-run apply of %s, which %s, is refused: %v", name, source, err)
		}
		liveObj, appliedObj := comparable(live), comparable(applied)
		d := firstDifference(o.Object, "", liveObj, appliedObj)
		if d == "" {
			d = firstDifference(nil, "", liveObj, appliedObj)
		}
		if d != "" {
			return fmt.Sprintf("%s is not what %s: applying it would change %s", name, source, d)
		}
	}
	return ""
}

// comparable is the object without what every write changes (its resource version and field managers) and
// without its generation, which follows a change of the spec that the comparison names instead.
func comparable(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	for _, f := range []string{"managedFields", "resourceVersion", "generation"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	return c.Object
}

// firstDifference names the first field, in a stable order, where a and b differ ("" when they are equal),
// looking only at the fields stated has when it is set: so a report names what a source says (type ClusterIP)
// before what the API server derives from it (no externalTrafficPolicy).
func firstDifference(stated any, path string, a, b any) string {
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	sm, sIsMap := stated.(map[string]any)
	if aIsMap && bIsMap || sIsMap {
		keys := sm
		if !sIsMap {
			keys = maps.Clone(am)
			maps.Copy(keys, bm)
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if d := firstDifference(sm[k], strings.TrimPrefix(path+"."+k, "."), am[k], bm[k]); d != "" {
				return d
			}
		}
		return ""
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	sl, sIsList := stated.([]any)
	if aIsList && bIsList && len(al) == len(bl) && (!sIsList || len(sl) == len(al)) {
		for i := range al {
			var s any
			if sIsList {
				s = sl[i]
			}
			if d := firstDifference(s, fmt.Sprintf("%s[%d]", path, i), al[i], bl[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if reflect.DeepEqual(a, b) {
		return ""
	}
	return fmt.Sprintf("%s from %s to %s", path, short(a), short(b))
}

func short(v any) string {
	if v == nil {
		return "(unset)"
	}
	s := fmt.Sprint(v)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
