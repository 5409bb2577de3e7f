package commands

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/class"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/internal/state"
)

// servedAndJoined serves a class of bad-image-tag and joins it as alice in a fresh state directory.
func servedAndJoined(t *testing.T) (*class.Server, func()) {
	t.Helper()
	t.Setenv("LAB_STATE_DIR", t.TempDir())
	srv, err := class.NewServer(t.Context(), class.ServerOptions{Addr: "127.0.0.1:0", DataDir: t.TempDir(),
		Plan: class.Plan{Scenarios: []string{"bad-image-tag"}, TimeLimit: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
	c, plan, err := class.Join(ctx, class.Membership{URL: srv.URL(), Fingerprint: srv.Fingerprint(), Name: "alice"}, srv.Token())
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open()
	if err != nil {
		t.Fatal(err)
	}
	keep := &class.Joined{Membership: c.Membership(), Plan: plan, Cluster: "lab"}
	if _, err := class.LocalIn(st).Update(ctx, func(*class.Joined) (*class.Joined, error) { return keep, nil }); err != nil {
		t.Fatal(err)
	}
	return srv, stop
}

func TestReportToClass(t *testing.T) {
	srv, stop := servedAndJoined(t)
	var errOut bytes.Buffer
	f := &Factory{Out: &bytes.Buffer{}, ErrOut: &errOut, ClusterName: "lab"}
	ctx := context.Background()
	a := &session.Attempt{Scenario: "bad-image-tag", Started: time.Now().Add(-2 * time.Minute), Hints: 1,
		LastCheck: &session.CheckNote{Passed: true, Score: 5, Max: 6},
		Diagnosis: &session.Diagnosis{Stage: "runtime", Correct: true}}
	// Three checks worth 6 points pass; the hint took one.
	out := &grader.Outcome{Passed: true, Score: 6, Max: 6, Questions: []grader.QuestionOutcome{{Passed: true, Score: 6, Max: 6, Checks: []grader.CheckOutcome{
		{Name: "2 Pods of web are Running and Ready", Points: 3, Earned: 3, Passed: true, Evidence: "2/2 Ready"},
		{Name: "the Deployment runs nginx:1.27", Points: 2, Earned: 2, Passed: true, Evidence: "nginx:1.27"},
		{Name: "the Service web serves the nginx welcome page", Group: grader.GroupCollateral, Points: 1, Earned: 1, Passed: true, Evidence: "200 OK"}}}}}
	// The same scenario passed on another lab cluster of this machine is another attempt, not the class's.
	reportToClass(ctx, &Factory{Out: &bytes.Buffer{}, ErrOut: &errOut, ClusterName: "lab-2"}, class.EventCheck, a, out)
	if row := exportRow(t, srv, "alice"); row["status"] == "passed" {
		t.Fatalf("a check on another cluster reached the class: %v", row)
	}
	reportToClass(ctx, f, class.EventCheck, a, out)
	if errOut.Len() > 0 {
		t.Fatalf("a reachable class warned: %s", errOut.String())
	}
	row := exportRow(t, srv, "alice")
	for col, want := range map[string]string{"status": "passed", "score": "5", "max_score": "6", "checks_passed": "3", "checks_total": "3", "hints_taken": "1", "graded_by": "self-reported"} {
		if row[col] != want {
			t.Errorf("scoreboard %s = %q, want %q (row %v)", col, row[col], want, row)
		}
	}

	stop()
	reportToClass(ctx, f, class.EventHint, a, nil)
	if lines := strings.Split(strings.TrimSpace(errOut.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "warning: result not sent to the class: cannot reach class server") {
		t.Errorf("a class server that is gone: %q, want one warning line", errOut.String())
	}
	errOut.Reset()
	reportToClass(ctx, f, class.EventCheck, &session.Attempt{Scenario: "taint-dedicated-node"}, out)
	if errOut.Len() > 0 {
		t.Errorf("a scenario outside the class was sent: %s", errOut.String())
	}
}

func TestClassServeRefusesWhatASharedClusterCannotRun(t *testing.T) {
	t.Setenv("LAB_STATE_DIR", t.TempDir())
	for args, want := range map[string]string{
		"--shared-cluster k --scenarios webhook-require-limits,bad-image-tag,taint-dedicated-node": "error: a shared cluster runs only namespace-scoped scenarios; remove from --scenarios: " +
			"taint-dedicated-node (var node: lab reaches no node from a learner's namespace), webhook-require-limits (it reaches beyond its namespace (a webhook fault))",
		"--shared-cluster k --exam":         "error: --exam needs a cluster per learner",
		"--shared-cluster k":                "error: --shared-cluster needs --scenarios",
		"--scenarios bad-image-tagg":        `error: unknown scenario "bad-image-tagg"`,
		"--time-limit 30s":                  "error: --time-limit must be between 1m and 24h",
		"--scenarios bad-image-tag -o yaml": `error: unknown output format "yaml"`,
	} {
		var out, errOut bytes.Buffer
		code := Main(append([]string{"class", "serve"}, strings.Fields(args)...), strings.NewReader(""), &out, &errOut)
		if code != 1 || !strings.HasPrefix(errOut.String(), want) || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("lab class serve %s: exit %d, %q; want one line starting %q", args, code, errOut.String(), want)
		}
	}
}

// exportRow reads a learner's row of the class's CSV export, by column name.
func exportRow(t *testing.T, srv *class.Server, name string) map[string]string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL()+"/api/export.csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.InstructorKey())
	resp, err := class.HTTPClient(srv.Fingerprint()).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	records, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range records[1:] {
		if r[0] == name {
			row := map[string]string{}
			for i, col := range records[0] {
				row[col] = r[i]
			}
			return row
		}
	}
	t.Fatalf("%s is not in the export: %v", name, records)
	return nil
}

// TestServeInfoCarriesNoKey prints what `lab class serve` prints for a real server: an https address, the join
// command with the certificate's fingerprint, and no address with the instructor key in it.
func TestServeInfoCarriesNoKey(t *testing.T) {
	srv, err := class.NewServer(t.Context(), class.ServerOptions{Addr: "127.0.0.1:0", DataDir: t.TempDir(),
		Plan: class.Plan{Scenarios: []string{"bad-image-tag"}, TimeLimit: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stopServer(t.Context(), srv) }()
	var out bytes.Buffer
	printServeInfo(&out, serveInfo{Title: "CKA class", Scenarios: []string{"bad-image-tag"}, TimeLimit: "1h0m0s", URL: srv.URL(),
		Fingerprint: srv.Fingerprint(), Token: srv.Token(), JoinCommand: srv.JoinCommand(), LoginURL: srv.LoginURL(),
		KeyFile: srv.InstructorKeyFile(), InstructorKey: srv.InstructorKey()}, time.Hour)
	text := out.String()
	if strings.Contains(text, srv.InstructorKey()) {
		t.Errorf("serve prints the instructor key:\n%s", text)
	}
	for _, want := range []string{"lab class join https://127.0.0.1:", " --fingerprint " + srv.Fingerprint() + " --token " + srv.Token(),
		"sign in at " + srv.URL() + "/login with the key in " + srv.InstructorKeyFile()} {
		if !strings.Contains(text, want) {
			t.Errorf("serve output lacks %q:\n%s", want, text)
		}
	}
	for _, word := range strings.Fields(text) {
		if strings.Contains(word, "://") && strings.ContainsAny(word, "?#") {
			t.Errorf("printed address %q carries a query or fragment", word)
		}
	}
}
