// Package history keeps the learner's record of attempts in one append-only JSON-lines file in lab's state
// directory: one line per graded attempt (a check, a stopped attempt, an exam question). Every line carries its
// format version, so records written by an older lab stay readable after an upgrade and lines from a newer one
// are skipped instead of misread. Grading never reads it: it only feeds `lab progress`, `lab drill` and the
// BEST column of `lab list`.
package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/state"
)

// Version is the format of the records this lab writes.
const Version = 1

// FileName is the history file in the state directory.
const FileName = "history.jsonl"

// Event is what a record was written for.
type Event string

// Events a record is written for.
const (
	EventCheck Event = "check"
	EventStop  Event = "stop"
	EventExam  Event = "exam"
)

// Record is one graded moment of an attempt. An attempt is identified by its scenario and start time; it may
// have several records (each `lab check`, then `lab stop`).
type Record struct {
	V        int           `json:"v"`
	At       time.Time     `json:"at"`
	Event    Event         `json:"event"`
	Scenario string        `json:"scenario"`
	Stage    journey.Stage `json:"stage"`
	Seed     int64         `json:"seed"`
	Started  time.Time     `json:"started"`
	Passed   bool          `json:"passed"`
	// Score and Max are the final score (hints and diagnosis counted); Graded is false when the attempt was
	// stopped without ever being checked.
	Score  int  `json:"score"`
	Max    int  `json:"max"`
	Graded bool `json:"graded"`
	// Seconds is the time spent on the attempt up to this record: since the task was shown for a practice
	// attempt, on the question for an exam.
	Seconds     float64    `json:"seconds"`
	Hints       int        `json:"hints"`
	SawSolution bool       `json:"sawSolution,omitempty"`
	Diagnosis   *Diagnosis `json:"diagnosis,omitempty"`
	// Exam is the exam's id when the attempt was an exam question.
	Exam string `json:"exam,omitempty"`
}

// Diagnosis is the learner's first answer to `lab diagnose`.
type Diagnosis struct {
	Stage   journey.Stage `json:"stage"`
	Correct bool          `json:"correct"`
}

// Path is the history file in lab's state directory.
func Path() (string, error) {
	d, err := state.Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, FileName), nil
}

// Add appends records to the learner's history in lab's state directory.
func Add(recs ...Record) error {
	path, err := Path()
	if err != nil {
		return err
	}
	return Append(path, recs...)
}

// Load reads the learner's history from lab's state directory, folded into one Result per attempt.
func Load() ([]Result, error) {
	path, err := Path()
	if err != nil {
		return nil, err
	}
	recs, err := Read(path)
	if err != nil {
		return nil, err
	}
	return Results(recs), nil
}

// Append adds records to the file at path with one write, creating it 0600. A single write of whole lines
// keeps concurrent lab commands from interleaving half records.
func Append(path string, recs ...Record) error {
	var buf bytes.Buffer
	for _, r := range recs {
		r.V = Version
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encode history record: %w", err)
		}
		buf.Write(append(b, '\n'))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("open history: %w", err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		_ = f.Close()
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return f.Close()
}

// Read returns the records of the file at path, oldest first; a missing file is an empty history. Lines that
// do not parse (a write cut short by a crash) and lines of another format version are skipped: history is a
// convenience and must never stop lab from working.
func Read(path string) ([]Record, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	defer func() { _ = f.Close() }()
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.V != Version || r.Scenario == "" {
			continue
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}
