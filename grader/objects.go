package grader

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/jsonpath"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/internal/manifest"
	"github.com/cka-lab/lab/scenarios"
)

func (e Env) get(ctx context.Context, r scenarios.ObjectRef) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(r.APIVersion, r.Kind))
	u.SetNamespace(r.Namespace)
	u.SetName(r.Name)
	return e.Clients.Get(ctx, u)
}

func (e Env) exists(ctx context.Context, r scenarios.ObjectRef, want bool) Result {
	live, err := e.get(ctx, r)
	if err != nil {
		return e.fail("read %s: %v", r, err)
	}
	switch {
	case live != nil && want:
		return pass("%s exists", r)
	case live == nil && !want:
		return pass("%s does not exist", r)
	case want:
		return e.fail("%s does not exist", r)
	}
	return e.fail("%s still exists", r)
}

// sameObject passes while the object was created before the task was shown: one deleted and recreated since,
// however faithfully, has a later creation time (and a new UID, which only the start could have recorded).
func (e Env) sameObject(ctx context.Context, r scenarios.ObjectRef) Result {
	live, err := e.get(ctx, r)
	if err != nil {
		return e.fail("read %s: %v", r, err)
	}
	if live == nil {
		return e.fail("%s does not exist", r)
	}
	created := live.GetCreationTimestamp().Time
	if recreated(created, e.Shown) {
		return e.fail("%s was created at %s, after the task was shown at %s: it was deleted and recreated, which the task rules out",
			r, created.UTC().Format(time.TimeOnly), e.Shown.UTC().Format(time.TimeOnly))
	}
	return pass("%s is the object the task started with (created %s)", r, created.UTC().Format(time.TimeOnly))
}

// recreated says whether an object was created once the task was shown (zero: unknown, never judged).
// Creation times have whole seconds; a task is shown at the start of a second after its setup's (session's
// shownAt), so an object created in the second it was shown is the learner's.
func recreated(created, shown time.Time) bool {
	return !shown.IsZero() && !created.Before(shown.Truncate(time.Second))
}

func (e Env) field(ctx context.Context, c *scenarios.FieldCheck) Result {
	live, err := e.get(ctx, c.Object)
	if err != nil {
		return e.fail("read %s: %v", c.Object, err)
	}
	if live == nil {
		if c.Absent {
			return pass("%s does not exist", c.Object)
		}
		return e.fail("%s does not exist", c.Object)
	}
	got, err := jsonPath(live.Object, c.Path)
	if err != nil {
		return e.fail("read %s of %s: %v", c.Path, c.Object, err)
	}
	desc := fmt.Sprintf("%s of %s is %q", c.Path, c.Object, got)
	ok := got != ""
	switch {
	case c.Absent:
		ok = got == ""
	case c.Equals != nil:
		ok = got == *c.Equals
	case c.NotEquals != nil:
		ok = got != *c.NotEquals
	case c.Contains != "":
		ok = strings.Contains(got, c.Contains)
	case c.Matches != "":
		re, err := regexp.Compile(c.Matches)
		if err != nil {
			return e.fail("bad pattern %q: %v", c.Matches, err)
		}
		ok = re.MatchString(got)
	case c.Image != "":
		ok = sameImage(got, c.Image)
	case c.Quantity != nil:
		ok = inRange(got, *c.Quantity)
	}
	if ok {
		return pass("%s", desc)
	}
	return e.fail("%s%s", desc, want(c))
}

func want(c *scenarios.FieldCheck) string {
	switch {
	case c.Absent:
		return ", want it unset"
	case c.Equals != nil:
		return fmt.Sprintf(", want %q", *c.Equals)
	case c.NotEquals != nil:
		return fmt.Sprintf(", want anything but %q", *c.NotEquals)
	case c.Contains != "":
		return fmt.Sprintf(", want it to contain %q", c.Contains)
	case c.Matches != "":
		return fmt.Sprintf(", want it to match %q", c.Matches)
	case c.Image != "":
		return fmt.Sprintf(", want the image %s (in any spelling of the same reference)", c.Image)
	case c.Quantity != nil && c.Quantity.Min == c.Quantity.Max:
		return fmt.Sprintf(", want a quantity equal to %s", c.Quantity.Min)
	case c.Quantity != nil && c.Quantity.Min == "":
		return fmt.Sprintf(", want a quantity of at most %s", c.Quantity.Max)
	case c.Quantity != nil && c.Quantity.Max == "":
		return fmt.Sprintf(", want a quantity of at least %s", c.Quantity.Min)
	case c.Quantity != nil:
		return fmt.Sprintf(", want a quantity from %s to %s", c.Quantity.Min, c.Quantity.Max)
	}
	return ", want it set"
}

// jsonPath evaluates a kubectl-style JSONPath and prints it as kubectl -o jsonpath does; a missing field
// prints nothing.
func jsonPath(obj map[string]any, path string) (string, error) {
	jp := jsonpath.New("check").AllowMissingKeys(true)
	if err := jp.Parse(path); err != nil {
		return "", err
	}
	var b strings.Builder
	if err := jp.Execute(&b, obj); err != nil {
		return "", err
	}
	return b.String(), nil
}

// admission creates the manifest with a server-side dry run: authentication, authorization and every
// admission controller and webhook run, nothing is stored.
func (e Env) admission(ctx context.Context, c *scenarios.AdmissionCheck) Result {
	objs, err := manifest.Decode([]byte(c.Manifest))
	if err != nil {
		return e.fail("%v", err)
	}
	clients := e.Clients
	if c.As != "" {
		cfg := rest.CopyConfig(e.Clients.Config)
		user, groups := subject(c.As, c.Groups)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
		if clients, err = kube.FromConfig(cfg); err != nil {
			return e.fail("impersonate %s: %v", c.As, err)
		}
	}
	for _, o := range objs {
		ri, err := clients.Resource(o.GroupVersionKind(), o.GetNamespace())
		if err != nil {
			return e.fail("%v", err)
		}
		_, err = ri.Create(ctx, o, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if apierrors.IsAlreadyExists(err) {
			err = nil // existence is checked after admission: the request got through it
		}
		what := fmt.Sprintf("creating %s %s", o.GetKind(), manifest.Name(o))
		switch {
		case err == nil && c.Allowed:
		case err == nil:
			return Result{Evidence: what + " is accepted, want it rejected" + about(c.Message), Stage: journey.Admission}
		case !c.Allowed && strings.Contains(err.Error(), c.Message):
			return pass("%s is rejected: %v", what, err)
		default:
			return Result{Evidence: fmt.Sprintf("%s: %v", what, err), Stage: stageOfAPIError(err.Error()),
				viaWebhook: kube.WebhookNotCalled(err)}
		}
	}
	return pass("the API server accepts the manifest")
}

func about(msg string) string {
	if msg == "" {
		return ""
	}
	return fmt.Sprintf(" (with %q)", msg)
}

// stageOfAPIError classifies an API error the way the journey does.
func stageOfAPIError(msg string) journey.Stage {
	r := journey.Trace(journey.Evidence{APIError: msg})
	if r.Stopped == "" {
		return journey.Admission
	}
	return r.Stopped
}

// sameImage compares image references as the container runtime resolves them: the default registry,
// library/ and the latest tag filled in.
func sameImage(got, want string) bool {
	g, err := name.ParseReference(got)
	if err != nil {
		return false
	}
	w, err := name.ParseReference(want)
	if err != nil {
		return false
	}
	return g.Name() == w.Name()
}

// inRange compares a resource quantity with the bounds by value, whatever the units.
func inRange(got string, r scenarios.QuantityRange) bool {
	q, err := apiresource.ParseQuantity(got)
	if err != nil {
		return false
	}
	if r.Min != "" && q.Cmp(apiresource.MustParse(r.Min)) < 0 {
		return false
	}
	return r.Max == "" || q.Cmp(apiresource.MustParse(r.Max)) <= 0
}
