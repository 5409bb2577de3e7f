package class

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultMaxLearners caps a class: a large workshop, well below what one laptop serves.
const DefaultMaxLearners = 100

// Limits bound what one machine on the LAN can ask of the server.
type Limits struct {
	// MaxLearners caps the learners of the class; DefaultMaxLearners when 0.
	MaxLearners int
	// Results and ResultBurst bound each learner's posts (results, leaving): a learner's lab posts one result
	// per check, hint or diagnose, and an exam class a burst of one per question.
	Results     rate.Limit
	ResultBurst int
	// Guesses and GuessBurst bound, per client address, the requests that present a secret the server does
	// not know yet (joining with the class token, signing in with the instructor key), so neither can be
	// guessed; a room behind one address still joins at once within the burst.
	Guesses    rate.Limit
	GuessBurst int
}

// DefaultLimits are the limits of a class server on a room's LAN.
var DefaultLimits = Limits{MaxLearners: DefaultMaxLearners, Results: 2, ResultBurst: 30, Guesses: 1, GuessBurst: 40}

// limiters keeps one token bucket per key (a learner, a client address).
type limiters struct {
	mu    sync.Mutex
	every rate.Limit
	burst int
	by    map[string]*rate.Limiter
}

// maxLimiters bounds the buckets kept: past it, every client starts afresh, which only ever lets more through.
const maxLimiters = 4096

func newLimiters(every rate.Limit, burst int) *limiters {
	return &limiters{every: every, burst: burst, by: map[string]*rate.Limiter{}}
}

// allow takes a token for key and, when there is none, says how long until there is.
func (l *limiters) allow(key string) (bool, time.Duration) {
	l.mu.Lock()
	lim, ok := l.by[key]
	if !ok {
		if len(l.by) >= maxLimiters {
			clear(l.by)
		}
		lim = rate.NewLimiter(l.every, l.burst)
		l.by[key] = lim
	}
	l.mu.Unlock()
	r := lim.Reserve()
	if d := r.Delay(); d > 0 {
		r.Cancel()
		return false, d
	}
	return true, 0
}

// limited answers 429 with Retry-After when key has no token left, and reports whether it did.
func (l *limiters) limited(w http.ResponseWriter, key, what string) bool {
	ok, wait := l.allow(key)
	if ok {
		return false
	}
	secs := int(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, http.StatusTooManyRequests, "too many %s from %s: try again in %d s", what, key, secs)
	return true
}

// clientAddr is the request's client IP, the key of the per-address limits.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// withDefaults fills in the limits left at zero.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxLearners == 0 {
		l.MaxLearners = d.MaxLearners
	}
	if l.Results == 0 {
		l.Results, l.ResultBurst = d.Results, d.ResultBurst
	}
	if l.Guesses == 0 {
		l.Guesses, l.GuessBurst = d.Guesses, d.GuessBurst
	}
	return l
}

func (l Limits) validate() error {
	if l.MaxLearners < 1 || l.ResultBurst < 1 || l.GuessBurst < 1 {
		return fmt.Errorf("class limits must allow at least one learner and one request, not %+v", l)
	}
	return nil
}
