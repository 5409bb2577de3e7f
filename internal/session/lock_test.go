package session_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/cka-lab/lab/internal/session"
)

// A hint asked for while a check grades is refused with one line that names the check, instead of being
// saved and then lost when the check saves the attempt it read before; once the check is done, the hint is
// taken and the attempt keeps both.
func TestLockKeepsAHintFromBeingLostToACheck(t *testing.T) {
	f := newFixture(t)
	t.Setenv("LAB_LOCK_WAIT", "200ms")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sc, err := f.catalog.Get("dedicated-worker")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.session.Start(ctx, sc, 7); err != nil {
		t.Fatal(err)
	}

	unlock, err := session.Lock(ctx, f.store, "lab") // as `lab check` takes it
	if err != nil {
		t.Fatal(err)
	}
	var hintErr error
	f.grading = func() {
		if unlockHint, err := session.Lock(ctx, f.store, "lab"); err != nil {
			hintErr = err
		} else {
			unlockHint()
		}
	}
	a, inst, err := f.session.Active(ctx, f.catalog)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.session.Check(ctx, a, inst, 0, false, nil); err != nil {
		t.Fatal(err)
	}
	unlock()
	me := regexp.QuoteMeta(filepath.Base(os.Args[0]))
	if hintErr == nil || !regexp.MustCompile(`^cluster lab is busy: pid \d+ \(`+me+`( .*)?, since \d\d:\d\d:\d\d\) is still running; wait for it to finish, or stop it, and run your command again$`).MatchString(hintErr.Error()) {
		t.Fatalf("a hint during the check: %v; want one line naming the check and what to do", hintErr)
	}

	unlock, err = session.Lock(ctx, f.store, "lab") // as `lab hint` takes it, once the check is done
	if err != nil {
		t.Fatalf("the lock after the check: %v", err)
	}
	a, inst, err = f.session.Active(ctx, f.catalog)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.session.RevealHint(a, inst); err != nil {
		t.Fatal(err)
	}
	unlock()
	if a, err := f.session.Current(ctx); err != nil || a.Hints != 1 || a.LastCheck == nil {
		t.Fatalf("the attempt after a check, then a hint: %+v, %v; want the hint and the check's grade", a, err)
	}
}
