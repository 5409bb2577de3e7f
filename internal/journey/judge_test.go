package journey

import "testing"

func TestSameObject(t *testing.T) {
	for _, tc := range []struct {
		typed, want string
		same        bool
	}{
		{"deploy/web", "deployment/web", true},
		{"Deployment/WEB", "deployment/web", true},
		{"deployments.apps/web", "deployment/web", true},
		{"rs/web-5d9", "replicaset/web-5d9", true},
		{"cm/app-content", "configmap/app-content", true},
		{"configmaps/app-content", "configmap/app-content", true},
		{"pvc/data", "persistentvolumeclaim/data", true},
		{"sa/deployer", "serviceaccount/deployer", true},
		{"svc/web", "service/web", true},
		{"vwc/resource-policy", "validatingwebhookconfiguration/resource-policy", true},
		{"validatingwebhookconfigurations.admissionregistration.k8s.io/resource-policy", "validatingwebhookconfiguration/resource-policy", true},
		{"no/lab-worker", "node/lab-worker", true},
		{"nodes/lab-worker", "node/lab-worker", true},
		{"netpol/deny", "networkpolicy/deny", true},
		{"networkpolicies/deny", "networkpolicy/deny", true},
		{"sc/standard", "storageclasses/standard", true},
		{"ing/web", "ingresses/web", true},
		{"ep/web", "endpoints/web", true},
		{"role/deployer", "role/deployer", true},
		{"rolebinding/deployer", "role/deployer", false},
		{"deploy/web", "deployment/api", false},
		{"pod/web", "deployment/web", false},
	} {
		if got := SameObject(tc.typed, tc.want); got != tc.same {
			t.Errorf("SameObject(%q, %q) = %t, want %t", tc.typed, tc.want, got, tc.same)
		}
	}
}

func TestAnswerCorrect(t *testing.T) {
	for _, tc := range []struct {
		stage, object string
		correct       bool
	}{
		{"image", "", true},
		{"pull", "", true},
		{"Image", "deploy/web", true},
		{"image", "deploy/api", false},
		{"runtime", "", false},
		{"scheduling", "", false},
		{"scheduling", "deploy/web", false},
	} {
		a, err := ParseAnswer(tc.stage, tc.object)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.stage, tc.object, err)
		}
		if got := a.Correct(Image, "deployment/web"); got != tc.correct {
			t.Errorf("diagnose %s %s: correct=%t, want %t", tc.stage, tc.object, got, tc.correct)
		}
	}
	if a, _ := ParseAnswer("image", "deploy/anything"); !a.Correct(Image, "") {
		t.Error("an object named when the scenario names none is not held against the learner")
	}
}

func TestParseAnswerRejectsBadInput(t *testing.T) {
	for _, tc := range [][2]string{{"nowhere", ""}, {"image", "web"}, {"image", "deploy/"}, {"image", "/web"}} {
		if _, err := ParseAnswer(tc[0], tc[1]); err == nil {
			t.Errorf("diagnose %q %q: want an error", tc[0], tc[1])
		}
	}
}

func TestParseWorkload(t *testing.T) {
	for _, tc := range []struct {
		in, kind, name string
		bad            bool
	}{
		{in: "deploy/web", kind: "deployment", name: "web"},
		{in: "deployments.apps/web", kind: "deployment", name: "web"},
		{in: "pod/x", kind: "pod", name: "x"},
		{in: "web-7d9c-x2k", kind: "pod", name: "web-7d9c-x2k"},
		{in: "sts/db", kind: "statefulset", name: "db"},
		{in: "ds/agent", kind: "daemonset", name: "agent"},
		{in: "job/j", kind: "job", name: "j"},
		{in: "jobs.batch/j", kind: "job", name: "j"},
		{in: "rs/web-5d9", kind: "replicaset", name: "web-5d9"},
		{in: "svc/web", bad: true},
		{in: "cm/app", bad: true},
		{in: "deploy/", bad: true},
		{in: "deploy/a/b", bad: true},
		{in: "", bad: true},
	} {
		kind, name, err := ParseWorkload(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseWorkload(%q) = %s/%s, want an error", tc.in, kind, name)
			}
			continue
		}
		if err != nil || kind != tc.kind || name != tc.name {
			t.Errorf("ParseWorkload(%q) = %q, %q, %v; want %q, %q", tc.in, kind, name, err, tc.kind, tc.name)
		}
	}
}
