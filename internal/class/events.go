package class

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// hub tells event streams that the class changed. Each subscriber has a one-slot channel: a slow browser
// gets one "changed" signal however many results arrived, and then sends the latest board, never a backlog.
type hub struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

func newHub() *hub { return &hub{subs: map[chan struct{}]struct{}{}} }

// subscribe returns a channel that is already signalled, so the subscriber starts with the current board.
func (h *hub) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	ch <- struct{}{}
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

func (h *hub) notify() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// boardState is what the scoreboard page renders: the plan and one row per learner.
type boardState struct {
	planState
	Learners []row `json:"learners"`
}

func (s *Server) boardState() boardState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return boardState{planState: s.planStateLocked(time.Now()), Learners: s.board.snapshot(s.plan.Scenarios)}
}

// handleEvents streams the whole board as a "board" event on connect and after every change. The board is
// small, and sending all of it lets a reconnecting page catch up without replaying anything.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	changed, unsubscribe := s.events.subscribe()
	defer unsubscribe()
	flush := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	// Keep-alive comments stop idle proxies and browsers from dropping a quiet stream.
	keepAlive := time.NewTicker(20 * time.Second)
	defer keepAlive.Stop()
	for {
		var msg string
		select {
		case <-r.Context().Done():
			return
		case <-keepAlive.C:
			msg = ": keep-alive\n\n"
		case <-changed:
			data, err := json.Marshal(s.boardState())
			if err != nil {
				return
			}
			msg = fmt.Sprintf("retry: 2000\nevent: board\ndata: %s\n\n", data)
		}
		if _, err := fmt.Fprint(w, msg); err != nil {
			return
		}
		if err := flush.Flush(); err != nil {
			return
		}
	}
}
