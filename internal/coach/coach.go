// Package coach reads the learner's writes from the API server's audit log and says what a coach would beside
// the grade: an object deleted and recreated, a Pod its controller owns edited directly, a forced delete,
// objects changed in namespaces the task did not involve. It judges how a fix was made, never whether it
// works: that is the grader's.
package coach

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cka-lab/lab/internal/kube"
)

// Event is the part of an audit.k8s.io/v1 Event coaching reads (k8s.io/apiserver's types would bring the
// whole API server along for one struct).
type Event struct {
	Verb       string     `json:"verb"`
	RequestURI string     `json:"requestURI"`
	User       User       `json:"user"`
	UserAgent  string     `json:"userAgent"`
	ObjectRef  *ObjectRef `json:"objectRef"`
	// ResponseStatus is nil for an event that never completed (a panic).
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	// RequestObject is logged for deletes (their DeleteOptions); ResponseObject for Pod updates (the Pod, with
	// its owners): see kindconfigs/audit-policy.yaml.
	RequestObject  json.RawMessage `json:"requestObject"`
	ResponseObject json.RawMessage `json:"responseObject"`
	Received       time.Time       `json:"requestReceivedTimestamp"`
}

// User is who made a request.
type User struct {
	Username string `json:"username"`
}

// ObjectRef is the object a request was about.
type ObjectRef struct {
	Resource    string `json:"resource"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	APIGroup    string `json:"apiGroup"`
	Subresource string `json:"subresource"`
}

// Parse reads audit events, one JSON object a line. A line that is not one (cut short by a rotation or a full
// disk) is skipped: coaching is advice, and one lost event must not cost the rest.
func Parse(r io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(r)
	// A Pod logged with its request and response can run to tens of KiB.
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.ObjectRef != nil {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	return out, nil
}

// writes are the verbs that change an object.
var writes = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// objectSubresources are the subresources whose writes change the object itself (kubectl scale); others are
// actions on it (exec, a token, an eviction).
var objectSubresources = map[string]bool{"": true, "scale": true}

// Learner keeps the learner's successful writes to objects received at or after since, oldest first: not lab's
// (its user agent), not a component's or a controller's (a system: identity the policy did not already drop),
// and not a review (`kubectl auth can-i` creates a SelfSubjectAccessReview with no name).
func Learner(events []Event, since time.Time) []Event {
	var out []Event
	for _, e := range events {
		switch {
		case e.Received.Before(since), !writes[e.Verb], e.ObjectRef == nil, e.ObjectRef.Name == "" && e.Verb != "deletecollection",
			!objectSubresources[e.ObjectRef.Subresource], strings.HasPrefix(e.UserAgent, kube.UserAgent),
			strings.HasPrefix(e.User.Username, "system:"), e.ResponseStatus == nil, e.ResponseStatus.Code >= 300:
			continue
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.Received.Compare(b.Received) })
	return out
}

// Note is one thing a coach would say.
type Note struct {
	// Kind is one of the Kind* constants.
	Kind string `json:"kind"`
	// Object is kubectl's name of the object ("deployment/web"), empty for a note about a namespace.
	Object    string    `json:"object,omitempty"`
	Namespace string    `json:"namespace,omitempty"`
	At        time.Time `json:"at"`
	Message   string    `json:"message"`
}

// Kinds of notes.
const (
	KindRecreated  = "recreated"
	KindOwnedPod   = "edited-owned-pod"
	KindForced     = "forced-delete"
	KindUninvolved = "uninvolved"
)

// Scope is what the task is about: its words and what it names (scenarios.Scenario.Involved).
type Scope struct {
	Task       string
	Namespaces map[string]bool
	// Objects are "Kind/namespace/name".
	Objects map[string]bool
}

// inPlace finds a task that asks for a fix in place.
var inPlace = regexp.MustCompile(`(?i)(not|never|without) delet\w* and recreat|(fix|edit|change|update)\w* (it |them )?in place`)

// Notes derives the notes from the learner's writes (Learner's result), in the order they happened.
func Notes(events []Event, scope Scope) []Note {
	var out []Note
	deleted := map[string]Event{}
	recreated, ownedPods := map[string]bool{}, map[string]bool{}
	uninvolved := map[string]map[string]bool{}
	uninvolvedAt := map[string]time.Time{}
	for _, e := range events {
		ref := *e.ObjectRef
		key := ref.APIGroup + "/" + ref.Resource + "/" + ref.Namespace + "/" + ref.Name
		name := singular(ref.Resource) + "/" + ref.Name
		switch e.Verb {
		case "delete":
			deleted[key] = e
			if forced(e) {
				out = append(out, Note{Kind: KindForced, Object: name, Namespace: ref.Namespace, At: e.Received,
					Message: fmt.Sprintf("you used --force on %s%s: it skips the graceful shutdown and, for a Pod, removes it before its kubelet confirms it stopped", name, inNamespace(ref.Namespace))})
			}
		case "create":
			if _, ok := deleted[key]; ok && !recreated[key] {
				recreated[key] = true
				msg := fmt.Sprintf("you deleted and recreated %s%s", name, inNamespace(ref.Namespace))
				if inPlace.MatchString(scope.Task) {
					msg += " (the task said to fix it in place)"
				} else {
					msg += ": editing it in place (kubectl edit, patch, set) keeps its history and what else refers to it"
				}
				out = append(out, Note{Kind: KindRecreated, Object: name, Namespace: ref.Namespace, At: e.Received, Message: msg})
			}
		case "update", "patch":
			if ref.Resource == "pods" && ref.APIGroup == "" && !ownedPods[key] {
				if owner := controller(e.ResponseObject); owner != "" {
					ownedPods[key] = true
					out = append(out, Note{Kind: KindOwnedPod, Object: name, Namespace: ref.Namespace, At: e.Received,
						Message: fmt.Sprintf("you edited %s directly, but %s owns it: the next Pod it makes comes from its template, without your change", name, owner)})
				}
			}
		}
		if ref.Namespace != "" && !scope.Namespaces[ref.Namespace] && !scope.Objects[kindKey(ref)] {
			if uninvolved[ref.Namespace] == nil {
				uninvolved[ref.Namespace], uninvolvedAt[ref.Namespace] = map[string]bool{}, e.Received
			}
			uninvolved[ref.Namespace][key] = true
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(uninvolved)) {
		n := len(uninvolved[ns])
		out = append(out, Note{Kind: KindUninvolved, Namespace: ns, At: uninvolvedAt[ns],
			Message: fmt.Sprintf("you changed %d object%s in %s that the task did not involve", n, map[bool]string{true: "s"}[n != 1], ns)})
	}
	slices.SortStableFunc(out, func(a, b Note) int { return a.At.Compare(b.At) })
	return out
}

func inNamespace(ns string) string {
	if ns == "" {
		return ""
	}
	return " in " + ns
}

// forced is a delete with a grace period of 0, as `kubectl delete --force` (or --grace-period=0) sends it: in
// its DeleteOptions body or, from other clients, in the query.
func forced(e Event) bool {
	var opts struct {
		GracePeriodSeconds *int64 `json:"gracePeriodSeconds"`
	}
	if json.Unmarshal(e.RequestObject, &opts) == nil && opts.GracePeriodSeconds != nil {
		return *opts.GracePeriodSeconds == 0
	}
	if u, err := url.Parse(e.RequestURI); err == nil {
		return u.Query().Get("gracePeriodSeconds") == "0"
	}
	return false
}

// controller names the controller that owns a Pod ("ReplicaSet web-7d9"), from the Pod the API server answered
// an update with; empty when it has none or the response is not a Pod (a failed update).
func controller(pod json.RawMessage) string {
	var p struct {
		Kind     string `json:"kind"`
		Metadata struct {
			OwnerReferences []struct {
				Kind       string `json:"kind"`
				Name       string `json:"name"`
				Controller *bool  `json:"controller"`
			} `json:"ownerReferences"`
		} `json:"metadata"`
	}
	if json.Unmarshal(pod, &p) != nil || p.Kind != "Pod" {
		return ""
	}
	for _, o := range p.Metadata.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return o.Kind + " " + o.Name
		}
	}
	return ""
}

// singular is kubectl's lower-case singular of a resource: deployments -> deployment, networkpolicies ->
// networkpolicy, ingresses -> ingress.
func singular(resource string) string {
	switch {
	case resource == "endpoints":
		return resource
	case strings.HasSuffix(resource, "ies"):
		return strings.TrimSuffix(resource, "ies") + "y"
	case strings.HasSuffix(resource, "sses"), strings.HasSuffix(resource, "xes"):
		return strings.TrimSuffix(resource, "es")
	}
	return strings.TrimSuffix(resource, "s")
}

// kindKey is how scenarios.Scenario.Involved names an object, but with the kind lower-cased: it compares with
// a key whose kind was lower-cased too (see Scope.Objects, which NewScope fills).
func kindKey(ref ObjectRef) string {
	return singular(ref.Resource) + "/" + ref.Namespace + "/" + ref.Name
}

// NewScope builds a Scope from a task and Involved's namespaces and objects ("Kind/namespace/name").
func NewScope(task string, namespaces, objects map[string]bool) Scope {
	s := Scope{Task: task, Namespaces: namespaces, Objects: map[string]bool{}}
	for k := range objects {
		s.Objects[strings.ToLower(k)] = true
	}
	return s
}
