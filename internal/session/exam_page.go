package session

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/cka-lab/lab/internal/state"
)

// FlagQuestion flags question i (0-based) of cluster's running exam, or unflags it, and returns whether it is
// flagged now, as `lab exam flag` does; like FocusHost it takes the cluster's lock only briefly and needs no
// cluster, so the exam's page can call it on every click.
func FlagQuestion(ctx context.Context, st *state.Store, cluster string, i int) (bool, error) {
	lock, err := st.LockCluster(ctx, cluster, 5*time.Second)
	if err != nil {
		return false, err
	}
	defer func() { _ = lock.Unlock() }()
	e, err := ReadExam(st, cluster)
	if err != nil {
		return false, err
	}
	if e == nil || !e.Running() {
		return false, ErrExamEnded
	}
	if _, err := e.ToggleFlag(i + 1); err != nil {
		return false, err
	}
	return e.Questions[i].Flagged, st.Write(cluster, examFile, e)
}

// ErrExamEnded is an exam that no longer runs: nothing on it changes.
var ErrExamEnded = errors.New("the exam has ended")

// ExamNotesFile is where the exam's page keeps the learner's notes on exam id: beside its gradings, so they
// outlive neither the cluster nor the exam's record of reports.
func ExamNotesFile(st *state.Store, cluster, id string) string {
	return filepath.Join(st.ClusterDir(cluster), "exams", id, "notes.json")
}
