package class

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cka-lab/lab/internal/browsertest"
)

// TestScoreboardUpdatesLiveInBrowser watches the scoreboard in headless Chromium while learners join and post
// through the Client and the instructor uses the controls in a second tab: every change must reach the page
// over the event stream, without a reload.
func TestScoreboardUpdatesLiveInBrowser(t *testing.T) {
	s, _ := startServer(t, t.TempDir(), ServerOptions{Plan: testPlan()})
	browser := newBrowser(t, s)

	board := newTab(t, browser)
	do(t, board, "open the scoreboard", chromedp.Navigate(s.URL()))
	waitFor(t, board, "the first board", `document.body.dataset.updates >= 1 && document.getElementById("title").textContent === "Tuesday CKA"`)
	waitFor(t, board, "no instructor controls without signing in", `document.getElementById("instructor").hidden && !document.getElementById("sign-in").hidden`)
	// This flag survives only as long as the page is never reloaded.
	do(t, board, "mark the page", chromedp.Evaluate[chromedp.Void](`window.labNoReload = true`))

	alice, bob, carol := mustJoin(t, s, "alice"), mustJoin(t, s, "bob"), mustJoin(t, s, "carol")
	waitFor(t, board, "three rows", `rowOrder() === "alice,bob,carol"`)
	waitFor(t, board, "alice not started", cellIs("alice", "crashloop", "not-started", "–"))

	mustPost(t, alice, Result{Scenario: "crashloop", Event: EventStart, TimeUsed: 30 * time.Second})
	waitFor(t, board, "alice in progress", cellIs("alice", "crashloop", "in-progress", "0:30"))
	mustPost(t, bob, check("crashloop", false, 4))
	waitFor(t, board, "bob failed a check", cellIs("bob", "crashloop", "failed", "4/10"))
	mustPost(t, carol, check("crashloop", true, 10))
	waitFor(t, board, "carol passed", cellIs("carol", "crashloop", "passed", "10/10"))
	waitFor(t, board, "carol's pass marked as her lab's word", `cellOf("carol", "crashloop").classList.contains("self-reported") && cellOf("carol", "crashloop").textContent.includes("self-reported")`)
	mustPost(t, alice, check("crashloop", true, 8))
	waitFor(t, board, "alice passed", cellIs("alice", "crashloop", "passed", "8/10"))
	mustPost(t, carol, check("broken-dns", true, 6))
	waitFor(t, board, "carol's second pass", cellIs("carol", "broken-dns", "passed", "6/10")+` && totalOf("carol") === "16"`)

	do(t, board, "sort by total", chromedp.Click(chromedp.CSS(`th[data-sort="total"]`)))
	waitFor(t, board, "highest total first", `rowOrder() === "carol,alice,bob"`)
	do(t, board, "reverse the total", chromedp.Click(chromedp.CSS(`th[data-sort="total"]`)))
	waitFor(t, board, "lowest total first", `rowOrder() === "bob,alice,carol"`)
	do(t, board, "sort by time", chromedp.Click(chromedp.CSS(`th[data-sort="time"]`)))
	waitFor(t, board, "least time first", `rowOrder() === "bob,alice,carol"`)
	do(t, board, "sort by name", chromedp.Click(chromedp.CSS(`th[data-sort="name"]`)))
	waitFor(t, board, "names in order", `rowOrder() === "alice,bob,carol"`)

	waitFor(t, board, "the controls' API refused without a session",
		`fetch("/api/pause", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"}).then((r) => r.status === 401)`)

	instructor := newTab(t, browser)
	do(t, instructor, "open the sign-in page", chromedp.Navigate(s.LoginURL()))
	follow(t, instructor, "sign in with a wrong key",
		chromedp.SetValue(chromedp.CSS("#key"), "not-the-key"),
		chromedp.Submit(chromedp.CSS("#key")))
	waitFor(t, instructor, "the wrong key refused", `location.pathname === "/login" && !document.getElementById("failed").hidden`)
	follow(t, instructor, "sign in",
		chromedp.SetValue(chromedp.CSS("#key"), s.InstructorKey()),
		chromedp.Submit(chromedp.CSS("#key")))
	waitFor(t, instructor, "instructor controls", `!document.getElementById("instructor").hidden && document.body.dataset.updates >= 1`)
	// The session is a cookie the page's script cannot read, and the key is in no address the browser keeps.
	waitFor(t, instructor, "no key in the address or the script's reach", fmt.Sprintf(
		`location.href === %q && !document.cookie.includes("lab_instructor") && !document.documentElement.outerHTML.includes(%q)`,
		s.URL()+"/", s.InstructorKey()))
	do(t, instructor, "pause", chromedp.Click(chromedp.CSS("#pause")))
	// Each control's effect is awaited in both tabs: a banner or header that appears in the instructor's tab
	// moves the buttons, and a click aimed before the move lands beside its button.
	waitForBoth(t, board, instructor, "paused banner", `!document.getElementById("paused-banner").hidden && document.getElementById("time-left").textContent.includes("(paused)")`)
	do(t, instructor, "reveal a hint", chromedp.Click(chromedp.CSS("#reveal-hint")))
	waitForBoth(t, board, instructor, "revealed hint", `document.querySelector('th[data-scenario="broken-dns"]').textContent.includes("1 hint revealed")`)
	do(t, instructor, "extend by 15 minutes",
		chromedp.SetValue(chromedp.CSS("#extend-minutes"), "15"),
		chromedp.Click(chromedp.CSS("#extend")))
	waitForBoth(t, board, instructor, "extended clock", `/Time left 1:1[45]:\d\d/.test(document.getElementById("time-left").textContent)`)
	do(t, instructor, "resume", chromedp.Click(chromedp.CSS("#resume")))
	waitForBoth(t, board, instructor, "banner gone", `document.getElementById("paused-banner").hidden`)
	if p := s.Plan(); p.Paused || p.RevealedHints["broken-dns"] != 1 || p.Extra < 15*time.Minute {
		t.Errorf("plan after the instructor's clicks = %+v", p)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bob.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, board, "bob shown as left", `document.querySelector('tr[data-learner="bob"]').dataset.left === "true"`)
	do(t, instructor, "end the class", chromedp.Click(chromedp.CSS("#end")))
	waitFor(t, instructor, "the end asks for a second click", `document.getElementById("end").textContent.includes("Click again")`)
	if s.Plan().Ended {
		t.Fatal("one click ended the class")
	}
	do(t, instructor, "confirm the end", chromedp.Click(chromedp.CSS("#end")))
	waitFor(t, board, "the ended class on the board", `!document.getElementById("ended-banner").hidden && document.getElementById("time-left").textContent === "Class ended"`)
	waitFor(t, board, "the same page all along", `window.labNoReload === true && performance.getEntriesByType("navigation").length === 1`)

	follow(t, instructor, "sign out", chromedp.Click(chromedp.CSS("#sign-out")))
	waitFor(t, instructor, "controls gone after signing out", `document.getElementById("instructor").hidden && !document.getElementById("sign-in").hidden`)
}

// pageHelpers are defined in the page through DevTools, which the page's script policy does not restrict.
const pageHelpers = `
window.rowOrder = () => [...document.querySelectorAll("#board tbody tr")].map((r) => r.dataset.learner).join(",");
window.totalOf = (name) => document.querySelector('tr[data-learner="' + name + '"] td.total')?.textContent;
window.cellOf = (name, scenario) => document.querySelector('td.cell[data-learner="' + name + '"][data-scenario="' + scenario + '"]');
`

func cellIs(learner, scenario, status, text string) string {
	return fmt.Sprintf(`(() => { const c = cellOf(%q, %q); return !!c && c.classList.contains("st-" + %q) && c.textContent.includes(%q); })()`,
		learner, scenario, status, text)
}

// newBrowser starts headless Chromium for one test, trusting the server's certificate by its public key as an
// instructor does who compared the fingerprint and accepted it.
func newBrowser(t *testing.T, s *Server) context.Context {
	t.Helper()
	return browsertest.Start(t, "the scoreboard browser test", chromedp.Flag("ignore-certificate-errors-spki-list", spkiHash(s)))
}

// spkiHash is the base64 SHA-256 of the server certificate's public key, the form Chromium pins.
func spkiHash(s *Server) string {
	sum := sha256.Sum256(s.tls.Certificates[0].Leaf.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

func newTab(t *testing.T, browser context.Context) context.Context {
	return browsertest.NewTab(t, browser)
}

func do(t *testing.T, tab context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	browsertest.Do(t, tab, what, actions...)
}

// follow runs actions that load another page (a form's submission) and waits until it has loaded.
func follow(t *testing.T, tab context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 15*time.Second)
	defer cancel()
	if _, err := chromedp.RunResponse(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitForBoth waits until the predicate holds in both tabs.
func waitForBoth(t *testing.T, board, instructor context.Context, what, predicate string) {
	t.Helper()
	waitFor(t, board, what+" on the board", predicate)
	waitFor(t, instructor, what+" in the instructor's tab", predicate)
}

// waitFor waits until the JavaScript predicate, which may call the page helpers, holds.
func waitFor(t *testing.T, tab context.Context, what, predicate string) {
	t.Helper()
	browsertest.WaitFor(t, tab, what, pageHelpers, predicate)
}
