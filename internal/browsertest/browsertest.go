// Package browsertest drives headless Chromium for the unit tests of lab's pages (the workshop scoreboard and
// the exam page): one way to start it with the flags this machine needs, to run actions with a deadline and
// to wait for a page's state. Only tests link it.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Path is Debian's Chromium, which `make test` installs (hack/prereqs.sh).
const Path = "/usr/bin/chromium"

// startLimit bounds Chromium's start: seconds on an idle machine, over 30s on a loaded 2-core CI runner.
const startLimit = 2 * time.Minute

// Start starts headless Chromium for one test, with extra flags beside the ones a machine without a network
// of its own needs (no background networking, updates, sync or QUIC), or skips the test with
// LAB_SKIP_BROWSER=1; what names the test in its messages. Without UserDataDir, chromedp gives every browser
// a fresh --user-data-dir and, unlike for a directory passed in, stops Chromium's leftover children and
// removes it.
func Start(t testing.TB, what string, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	if os.Getenv("LAB_SKIP_BROWSER") == "1" {
		t.Skipf("LAB_SKIP_BROWSER=1: %s skipped", what)
	}
	if _, err := os.Stat(Path); err != nil {
		t.Fatalf("%s needs Chromium at %s: run `apt-get install chromium` (or set LAB_SKIP_BROWSER=1): %v", what, Path, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, extra...)...)
	ctx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	FirstRun(t, ctx, "start Chromium")
	return ctx
}

// NewTab opens another tab of the browser.
func NewTab(t testing.TB, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	FirstRun(t, ctx, "open a tab")
	return ctx
}

// FirstRun creates the browser or tab of ctx. A browser or tab lives only as long as the context of its first
// run, so that run cannot carry a timeout; the test waits for it with one instead.
func FirstRun(t testing.TB, ctx context.Context, what string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(startLimit):
		t.Fatalf("%s: no answer from Chromium within %s", what, startLimit)
	}
}

// Do runs actions in the tab within 15 seconds.
func Do(t testing.TB, tab context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// WaitFor waits until the JavaScript predicate holds, re-checking on every DOM change, for up to ten seconds;
// prelude defines what the predicate calls (it runs through DevTools, which a page's script policy does not
// restrict). On failure it shows what the page shows.
func WaitFor(t testing.TB, tab context.Context, what, prelude, predicate string) {
	t.Helper()
	const timeout = 10 * time.Second
	script := prelude + fmt.Sprintf(`new Promise((resolve) => {
	const ok = () => { try { return Boolean(%s); } catch { return false; } };
	if (ok()) return resolve(true);
	const observer = new MutationObserver(() => { if (ok()) { observer.disconnect(); clearTimeout(timer); resolve(true); } });
	observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
	const timer = setTimeout(() => { observer.disconnect(); resolve(ok()); }, %d);
})`, predicate, timeout.Milliseconds())
	ctx, cancel := context.WithTimeout(tab, timeout+5*time.Second)
	defer cancel()
	ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](script, chromedp.EvalAwaitPromise))
	if err != nil || !ok {
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("waiting for %s (%s): %v; the page shows:\n%s", what, predicate, err, strings.TrimSpace(page))
	}
}
