package coach

import (
	"os"
	"strings"
	"testing"
	"time"
)

// testdata/attempt.log is recorded from a lab cluster's audit log during bad-image-tag: the learner's kubectl
// deleted and re-applied deployment/landing, labelled a Pod, deleted it with --force and created a ConfigMap
// in kube-system; the last two lines are lab's own writes (user agent cka-lab).
func recorded(t *testing.T) []Event {
	t.Helper()
	f, err := os.Open("testdata/attempt.log")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	events, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 7 {
		t.Fatalf("parsed %d events, want 7", len(events))
	}
	return events
}

var storefront = NewScope("Fix the Deployment (do not delete and recreate it) so that both replicas are Running",
	map[string]bool{"storefront": true}, map[string]bool{"Deployment/storefront/landing": true})

func TestNotesRecorded(t *testing.T) {
	events := Learner(recorded(t), time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC))
	if len(events) != 5 {
		t.Fatalf("learner's writes = %d, want 5 (lab's two left out)", len(events))
	}
	notes := Notes(events, storefront)
	want := []struct{ kind, object, text string }{
		{KindRecreated, "deployment/landing", "(the task said to fix it in place)"},
		{KindForced, "pod/landing-6546447475-6xlq8", "--force"},
		{KindUninvolved, "", "you changed 1 object in kube-system"},
	}
	if len(notes) != len(want) {
		t.Fatalf("notes = %+v", notes)
	}
	for i, w := range want {
		if n := notes[i]; n.Kind != w.kind || n.Object != w.object || !strings.Contains(n.Message, w.text) {
			t.Errorf("note %d = %+v, want %s %s %q", i, n, w.kind, w.object, w.text)
		}
	}
}

func TestLearnerSince(t *testing.T) {
	// The attempt started after the recreate: only the Pod's patch and delete and the ConfigMap remain.
	events := Learner(recorded(t), time.Date(2026, 12, 7, 1, 5, 7, 0, time.UTC))
	if len(events) != 3 {
		t.Fatalf("writes since start = %d, want 3", len(events))
	}
	for _, n := range Notes(events, storefront) {
		if n.Kind == KindRecreated {
			t.Errorf("a recreate before the start is not the learner's: %+v", n)
		}
	}
}

const (
	ownedPodPatch = `{"level":"RequestResponse","requestURI":"/api/v1/namespaces/shop/pods/web-7d9-abcde","verb":"patch","user":{"username":"kubernetes-admin"},"userAgent":"kubectl/v1.35.4 (linux/amd64) kubernetes/0000000","objectRef":{"resource":"pods","namespace":"shop","name":"web-7d9-abcde","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"responseObject":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-7d9-abcde","namespace":"shop","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d9","uid":"1","controller":true,"blockOwnerDeletion":true}]}},"requestReceivedTimestamp":"2026-12-07T01:10:00.000000Z"}`
	nakedPodPatch = `{"level":"RequestResponse","requestURI":"/api/v1/namespaces/shop/pods/debug","verb":"patch","user":{"username":"kubernetes-admin"},"userAgent":"kubectl/v1.35.4","objectRef":{"resource":"pods","namespace":"shop","name":"debug","apiVersion":"v1"},"responseStatus":{"code":200},"responseObject":{"kind":"Pod","metadata":{"name":"debug"}},"requestReceivedTimestamp":"2026-12-07T01:10:01Z"}`
	failedCreate  = `{"requestURI":"/apis/apps/v1/namespaces/shop/deployments","verb":"create","user":{"username":"kubernetes-admin"},"userAgent":"kubectl/v1.35.4","objectRef":{"resource":"deployments","namespace":"shop","name":"web","apiGroup":"apps"},"responseStatus":{"code":409},"requestReceivedTimestamp":"2026-12-07T01:10:02Z"}`
	webDelete     = `{"level":"Request","requestURI":"/apis/apps/v1/namespaces/shop/deployments/web?gracePeriodSeconds=0","verb":"delete","user":{"username":"kubernetes-admin"},"userAgent":"Go-http-client/1.1","objectRef":{"resource":"deployments","namespace":"shop","name":"web","apiGroup":"apps"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-12-07T01:10:03Z"}`
	webCreate     = `{"requestURI":"/apis/apps/v1/namespaces/shop/deployments","verb":"create","user":{"username":"kubernetes-admin"},"userAgent":"kubectl/v1.35.4","objectRef":{"resource":"deployments","namespace":"shop","name":"web","apiGroup":"apps"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-07T01:10:04Z"}`
	canI          = `{"requestURI":"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews","verb":"create","user":{"username":"kubernetes-admin"},"userAgent":"kubectl/v1.35.4","objectRef":{"resource":"selfsubjectaccessreviews","apiGroup":"authorization.k8s.io"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-07T01:10:05Z"}`
	exec          = `{"requestURI":"/api/v1/namespaces/other/pods/web/exec","verb":"create","user":{"username":"kubernetes-admin"},"userAgent":"kubectl/v1.35.4","objectRef":{"resource":"pods","namespace":"other","name":"web","subresource":"exec"},"responseStatus":{"code":101},"requestReceivedTimestamp":"2026-12-07T01:10:06Z"}`
	controllerPod = `{"requestURI":"/api/v1/namespaces/other/pods","verb":"create","user":{"username":"system:serviceaccount:kube-system:replicaset-controller"},"userAgent":"kube-controller-manager/v1.35.4","objectRef":{"resource":"pods","namespace":"other","name":"web-1"},"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-12-07T01:10:07Z"}`
	torn          = `{"requestURI":"/api/v1/namespaces/other/configmaps","verb":"cre`
)

func TestNotesSynthetic(t *testing.T) {
	// The owned Pod edited twice gets one note.
	log := strings.Join([]string{ownedPodPatch, ownedPodPatch, nakedPodPatch, failedCreate, webDelete, webCreate, canI, exec, controllerPod, torn}, "\n")
	events, err := Parse(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	learner := Learner(events, time.Time{})
	if len(learner) != 5 {
		t.Fatalf("learner's writes = %+v, want the three patches, the delete and the create", learner)
	}
	notes := Notes(learner, NewScope("Make the Deployment web serve again.", map[string]bool{"shop": true}, nil))
	kinds := []string{}
	for _, n := range notes {
		kinds = append(kinds, n.Kind+" "+n.Object)
	}
	want := "edited-owned-pod pod/web-7d9-abcde,forced-delete deployment/web,recreated deployment/web"
	if got := strings.Join(kinds, ","); got != want {
		t.Fatalf("notes = %s, want %s", got, want)
	}
	if !strings.Contains(notes[0].Message, "ReplicaSet web-7d9 owns it") {
		t.Errorf("owned Pod note = %q", notes[0].Message)
	}
	if strings.Contains(notes[2].Message, "the task said") {
		t.Errorf("a task that does not ask for a fix in place is not quoted: %q", notes[2].Message)
	}
}

func TestSingular(t *testing.T) {
	for in, want := range map[string]string{"deployments": "deployment", "networkpolicies": "networkpolicy",
		"ingresses": "ingress", "storageclasses": "storageclass", "endpoints": "endpoints", "pods": "pod"} {
		if got := singular(in); got != want {
			t.Errorf("singular(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTimelines(t *testing.T) {
	events := Learner(recorded(t), time.Time{})
	other := NewScope("Make the Service answer.", map[string]bool{"other": true}, nil)
	start := time.Date(2026, 12, 7, 1, 5, 1, 0, time.UTC)
	scopes := []Scope{storefront, other}
	per, others := Split(events, scopes)
	timelines, rest := Timelines(per, others, start, scopes)
	if tl := timelines[0]; tl == nil || tl.Writes != 4 || tl.AfterSeconds < 4 || tl.AfterSeconds > 5 || tl.FixSeconds < 1 || len(tl.WrongTurns) != 2 ||
		tl.WrongTurns[0].Kind != KindRecreated || tl.WrongTurns[1].Kind != KindForced {
		t.Errorf("storefront's timeline = %+v", tl)
	}
	if log := timelines[0].Log; len(log) != 4 || !log[0].At.Equal(timelines[0].FirstWrite) || !log[3].At.Equal(timelines[0].LastWrite) ||
		log[0].Verb == "" || !strings.Contains(log[0].Object, "/") || log[0].User == "" {
		t.Errorf("storefront's writes in order = %+v", log)
	}
	if timelines[1] != nil {
		t.Errorf("a question without writes has no timeline: %+v", timelines[1])
	}
	if len(rest) != 1 || rest[0].Kind != KindUninvolved || rest[0].Namespace != "kube-system" {
		t.Errorf("writes no question involves = %+v", rest)
	}
}

func TestWrongHost(t *testing.T) {
	at := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
	write := func(user, resource, ns, name string) Event {
		return Event{Verb: "patch", User: User{Username: user}, ObjectRef: &ObjectRef{Resource: resource, Namespace: ns, Name: name, APIGroup: "apps"}, Received: at}
	}
	hostOf := func(u string) string { return strings.TrimPrefix(u, "candidate@") }
	events := []Event{
		write("candidate@cka2000", "deployments", "shop", "web"),
		write("candidate@cka2000", "deployments", "shop", "web"), // the same object again: one note
		write("candidate@cka1000", "configmaps", "shop", "web-config"),
	}
	notes, fromHost := WrongHost(events, "cka1000", hostOf)
	if !fromHost || len(notes) != 1 || notes[0].Kind != KindWrongHost || notes[0].Object != "deployment/web" ||
		notes[0].Message != "you changed deployment/web in namespace shop on host cka2000; the question was on host cka1000" {
		t.Errorf("notes %+v, fromHost %v", notes, fromHost)
	}
	if _, fromHost := WrongHost(events[:2], "cka1000", hostOf); fromHost {
		t.Error("writes only from cka2000 counted as from the question's host")
	}
}
