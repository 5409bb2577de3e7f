package class

import (
	"encoding/csv"
	"encoding/xml"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestExports(t *testing.T) {
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan()})
	alice, bob := mustJoin(t, s, "alice"), mustJoin(t, s, "-bob")
	mustJoin(t, s, "carol")
	mustPost(t, alice, Result{Scenario: "crashloop", Event: EventStart})
	mustPost(t, alice, check("crashloop", false, 4))
	mustPost(t, alice, check("crashloop", true, 10))
	mustPost(t, alice, Result{Scenario: "crashloop", Event: EventDiagnose, Diagnosis: "bad probe", DiagnosisCorrect: new(true)})
	mustPost(t, bob, Result{Scenario: "broken-dns", Event: EventHint, HintsTaken: 2})

	status, body := request(t, s, "GET", "/api/export.csv", s.InstructorKey(), nil)
	if status != http.StatusOK {
		t.Fatalf("export.csv: status %d: %s", status, body)
	}
	records, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil {
		t.Fatalf("export.csv is not CSV: %v\n%s", err, body)
	}
	if len(records) != 1+3*3 {
		t.Fatalf("export.csv has %d rows, want a header and 9:\n%s", len(records), body)
	}
	byKey := map[string][]string{}
	for _, r := range records[1:] {
		byKey[r[0]+"/"+r[1]] = r[2:10]
	}
	want := map[string][]string{
		"alice/crashloop":   {"passed", "10", "10", "5", "5", "600", "0", "true"},
		"alice/broken-dns":  {"not-started", "0", "0", "0", "0", "0", "0", ""},
		"'-bob/broken-dns":  {"in-progress", "0", "0", "0", "0", "0", "2", ""},
		"carol/pending-pod": {"not-started", "0", "0", "0", "0", "0", "0", ""},
		"'-bob/pending-pod": {"not-started", "0", "0", "0", "0", "0", "0", ""},
		"alice/pending-pod": {"not-started", "0", "0", "0", "0", "0", "0", ""},
		"carol/crashloop":   {"not-started", "0", "0", "0", "0", "0", "0", ""},
	}
	for k, w := range want {
		if !reflect.DeepEqual(byKey[k], w) {
			t.Errorf("csv %s = %v, want %v", k, byKey[k], w)
		}
	}

	status, body = request(t, s, "GET", "/api/export.junit", s.InstructorKey(), nil)
	if status != http.StatusOK {
		t.Fatalf("export.junit: status %d: %s", status, body)
	}
	var doc junitSuites
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatalf("export.junit is not XML: %v\n%s", err, body)
	}
	if doc.Name != "Tuesday CKA" || doc.Tests != 9 || doc.Failures != 8 || len(doc.Suites) != 3 {
		t.Fatalf("junit totals = %q %d tests %d failures %d suites", doc.Name, doc.Tests, doc.Failures, len(doc.Suites))
	}
	for _, suite := range doc.Suites {
		if len(suite.Cases) != 3 {
			t.Errorf("suite %s has %d testcases, want 3", suite.Name, len(suite.Cases))
		}
		for _, tc := range suite.Cases {
			passed := suite.Name == "alice" && tc.Name == "crashloop"
			if passed != (tc.Failure == nil) {
				t.Errorf("%s/%s: failure %+v", suite.Name, tc.Name, tc.Failure)
			}
			if passed && tc.Time != "600.000" {
				t.Errorf("alice/crashloop time = %s, want 600.000", tc.Time)
			}
			if suite.Name == "-bob" && tc.Name == "broken-dns" && tc.Failure.Message != "started, never checked" {
				t.Errorf("bob/broken-dns failure = %+v", tc.Failure)
			}
		}
	}
}
