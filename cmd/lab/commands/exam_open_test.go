package commands

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/examweb"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/internal/state"
)

// TestExamPageReadsAndMovesTheRecord: the page's view, moves and flags go through the exam's record as the
// CLI's do (a move charges the time to the question left, as ssh to a host does), and an ended exam refuses them.
func TestExamPageReadsAndMovesTheRecord(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LAB_STATE_DIR", dir)
	st := state.At(dir)
	started := time.Now().UTC().Add(-10 * time.Minute)
	e := &session.Exam{V: session.ExamVersion, ID: "20260101T000000Z", Phase: session.PhaseActive, Started: started, CurrentSince: started, Duration: time.Hour,
		Questions: []session.ExamQuestion{{Scenario: "bad-image-tag", Weight: 4, Host: "cka2655"}, {Scenario: "readiness-probe-wrong-path", Weight: 7, Host: "cka2311"}}}
	cat, err := (&Factory{}).Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for i := range e.Questions {
		sc, err := cat.Get(e.Questions[i].Scenario)
		if err != nil {
			t.Fatal(err)
		}
		if e.Questions[i].Values, err = sc.Choose(1, oneWorker{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Write("lab", "exam.json", e); err != nil {
		t.Fatal(err)
	}
	sess := &session.Session{Store: st, Cluster: &cluster.Cluster{Record: cluster.Record{Name: "lab"}}}
	insts, err := sess.ExamInstances(cat, e)
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	p := &examPage{f: &Factory{ClusterName: "lab", Out: io.Discard, ErrOut: &errOut}, sess: sess, id: e.ID, insts: insts}
	ctx := context.Background()

	v, err := p.View(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Running || v.Current != 0 || len(v.Questions) != 2 || v.Questions[1].Host != "cka2311" || v.Questions[1].Title != insts[1].Title || v.Questions[0].Task == "" || !v.Deadline.Equal(e.Deadline()) {
		t.Errorf("view = %+v", v)
	}
	if err := p.Go(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := p.Flag(ctx, 1); err != nil {
		t.Fatal(err)
	}
	after, err := session.ReadExam(st, "lab")
	if err != nil {
		t.Fatal(err)
	}
	if after.Current != 1 || !after.Questions[1].Flagged || after.Questions[0].Spent < 10*time.Minute {
		t.Errorf("after moving to and flagging question 2: current %d, flagged %v, question 1 charged %s", after.Current, after.Questions[1].Flagged, after.Questions[0].Spent)
	}

	if _, _, err := p.Shell(); err == nil {
		t.Error("a shell without prepared hosts")
	}
	hosts := session.ExamHostsOf(st, "lab")
	if err := os.MkdirAll(hosts.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hosts.Dir, "bashrc"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if argv, _, err := p.Shell(); err != nil || argv[0] != "bash" || argv[2] != filepath.Join(hosts.Dir, "bashrc") {
		t.Errorf("the page's shell = %v, %v; want the exam terminal's bash", argv, err)
	}

	after.Phase = session.PhaseGraded
	if err := st.Write("lab", "exam.json", after); err != nil {
		t.Fatal(err)
	}
	if err := st.Write("lab", "exam-report.json", exam.Report{Exam: e.ID, Percent: 50}); err != nil {
		t.Fatal(err)
	}
	if v, err := p.View(ctx); err != nil || v.Running || v.Report == nil || v.Report.Percent != 50 {
		t.Errorf("the graded exam's view = %+v, %v", v, err)
	}
	// Graded by another lab while the page waited for the deadline: that grade stands.
	if rep, err := p.Grade(ctx); err != nil || rep.Percent != 50 {
		t.Errorf("grading an exam graded meanwhile = %+v, %v", rep, err)
	}
	if err := p.Go(ctx, 0); !errors.Is(err, examweb.ErrEnded) {
		t.Errorf("a move after the end: %v", err)
	}
	if err := p.Flag(ctx, 0); !errors.Is(err, examweb.ErrEnded) {
		t.Errorf("a flag after the end: %v", err)
	}
	if err := st.Remove("lab", "exam.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.View(ctx); !errors.Is(err, examweb.ErrEnded) {
		t.Errorf("the view of a stopped exam: %v", err)
	}
}

// oneWorker resolves a scenario's values as a two-node lab cluster would.
type oneWorker struct{}

func (oneWorker) Nodes(role string) ([]string, error) {
	if role == "worker" {
		return []string{"lab-worker"}, nil
	}
	return []string{"lab-control-plane"}, nil
}
func (oneWorker) CNIConfig(string) (string, error) { return "/etc/cni/net.d/10-kindnet.conflist", nil }
func (oneWorker) CNIPlugin(string) (string, error) { return "ptp", nil }
func (oneWorker) Builtin(string) string            { return "" }
