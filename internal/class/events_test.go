package class

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestEventsStream reads the event stream as a browser would: a board on connect, then one after each change.
func TestEventsStream(t *testing.T) {
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan()})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL()+"/api/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := HTTPClient(s.Fingerprint()).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(nil, 1<<20)
	next := func() boardState {
		t.Helper()
		for lines.Scan() {
			if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				var b boardState
				if err := json.Unmarshal([]byte(data), &b); err != nil {
					t.Fatalf("event data %q: %v", data, err)
				}
				return b
			}
		}
		t.Fatalf("event stream ended: %v", lines.Err())
		return boardState{}
	}
	if b := next(); len(b.Learners) != 0 || b.Plan.Title != "Tuesday CKA" || b.TimeLeft <= 0 {
		t.Fatalf("first board = %+v", b)
	}
	alice := mustJoin(t, s, "alice")
	if b := next(); len(b.Learners) != 1 || b.Learners[0].Cells["crashloop"].Status != statusNotStarted {
		t.Fatalf("board after join = %+v", b)
	}
	mustPost(t, alice, check("crashloop", true, 10))
	b := next()
	for b.Learners[0].Cells["crashloop"].Status != statusPassed {
		b = next()
	}
	instructorPost(t, s, "/api/pause", nil)
	for !b.Plan.Paused {
		b = next()
	}
}
