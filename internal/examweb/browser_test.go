package examweb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

const chromiumPath = "/usr/bin/chromium"

// TestExamPageInBrowser sits a fake exam in headless Chromium: a command typed into the page's terminal runs
// in the exam's shell and its output is in the terminal's DOM, a question is flagged, marked done and noted,
// the page moves between questions, and ending the exam shows the result. Screenshots are kept in
// LAB_ARTIFACTS (the test's temp dir when unset) and their paths logged.
func TestExamPageInBrowser(t *testing.T) {
	if !Assets() {
		t.Skip("this build embeds no xterm.js: run `make web` first")
	}
	fake := newFakeExam(time.Hour)
	s, notesFile, graded := startPage(t, fake)
	tab := newBrowser(t)
	shots := artifacts(t)

	do(t, tab, "open the page's link", chromedp.Navigate(s.URL()))
	waitFor(t, tab, "the page, without the token in its address", `document.body.dataset.updates >= 1 && location.search === "" && location.pathname === "/"`)
	waitFor(t, tab, "the first question", `document.getElementById("title").textContent.startsWith("Question 1/3") && document.getElementById("where").textContent.includes("ssh cka2655")`)
	waitFor(t, tab, "the shell's prompt in the terminal", `terminalText().includes("candidate@terminal$")`)

	do(t, tab, "type a command into the terminal", chromedp.Click(chromedp.CSS("#terminal")), typeKeys("echo hello-lab"+kb.Enter))
	// The row of output alone: the typed line holds the words too, after the prompt.
	waitFor(t, tab, "the command's output in the terminal", `terminalRows().includes("hello-lab")`)
	screenshot(t, tab, shots, "terminal.png")

	do(t, tab, "flag question 1", chromedp.Click(chromedp.CSS("#flag")))
	waitFor(t, tab, "question 1 flagged", `q(1).dataset.flagged === "true" && q(1).textContent.includes("⚑") && document.getElementById("flag").textContent === "Unflag"`)
	do(t, tab, "mark it done", chromedp.Click(chromedp.CSS("#done")))
	waitFor(t, tab, "question 1 done", `q(1).dataset.done === "true" && q(1).textContent.includes("✓")`)
	do(t, tab, "write a note", chromedp.SendKeys(chromedp.CSS("#note"), "image tag: nginx:1.27"))
	waitFor(t, tab, "the note saved", `document.getElementById("note-status").textContent === "Saved."`)

	do(t, tab, "go to the next question", chromedp.Click(chromedp.CSS("#next")))
	waitFor(t, tab, "question 2", `q(2).classList.contains("current") && document.getElementById("title").textContent.startsWith("Question 2/3") && document.getElementById("note").value === ""`)
	do(t, tab, "pick question 3 in the list", chromedp.Click(chromedp.CSS(`li[data-n="3"] button`)))
	waitFor(t, tab, "question 3", `q(3).classList.contains("current") && document.getElementById("where").textContent.includes("ssh cka7620")`)
	do(t, tab, "back to question 1", chromedp.Click(chromedp.CSS(`li[data-n="1"] button`)))
	waitFor(t, tab, "question 1's note again", `document.getElementById("note").value === "image tag: nginx:1.27"`)
	if v, _ := fake.View(context.Background()); !v.Questions[0].Flagged || v.Current != 0 {
		t.Errorf("the exam after the clicks: flagged %v, current %d", v.Questions[0].Flagged, v.Current)
	}
	if b, err := os.ReadFile(notesFile); err != nil || !strings.Contains(string(b), "nginx:1.27") {
		t.Errorf("the notes file: %s %v", b, err)
	}
	waitFor(t, tab, "the clock running down", `/^(59|60):\d\d left$/.test(document.getElementById("clock").textContent)`)
	screenshot(t, tab, shots, "exam.png")

	do(t, tab, "end the exam", chromedp.Click(chromedp.CSS("#end")))
	waitFor(t, tab, "a second click asked for", `document.getElementById("end").textContent.includes("Click again")`)
	do(t, tab, "confirm the end", chromedp.Click(chromedp.CSS("#end")))
	select {
	case err := <-graded:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the page's End did not grade")
	}
	waitFor(t, tab, "the result", `shown("result") && !shown("exam") && document.getElementById("verdict").textContent === "Not passed" && document.getElementById("total").textContent.startsWith("56.3%")`)
	waitFor(t, tab, "the failing check's evidence", `document.getElementById("details").textContent.includes("service/shop has no endpoints")`)
	screenshot(t, tab, shots, "result.png")

	do(t, tab, "open the review", chromedp.Click(chromedp.CSS("#review-link")))
	waitFor(t, tab, "the review", `location.pathname === "/review" && document.body.textContent.includes("service/shop has no endpoints") &&
		document.body.textContent.includes("on cka2655: patch service/shop in media") && document.body.textContent.includes("image tag: nginx:1.27") &&
		document.body.textContent.includes("A Service sends traffic to the Pods its selector matches.")`)
	screenshot(t, tab, shots, "review.png")
}

// TestExamPageTimeUpInBrowser: at the deadline the page stops the terminal and, once the server has graded,
// shows the result without a click.
func TestExamPageTimeUpInBrowser(t *testing.T) {
	if !Assets() {
		t.Skip("this build embeds no xterm.js: run `make web` first")
	}
	// Chromium first: on a loaded machine its start could take the whole exam.
	tab := newBrowser(t)
	s, _, graded := startPage(t, newFakeExam(5*time.Second))
	do(t, tab, "open the page's link", chromedp.Navigate(s.URL()))
	select {
	case err := <-graded:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("not graded at the deadline")
	}
	waitFor(t, tab, "the result after the deadline", `shown("result") && !shown("exam") && document.getElementById("clock").textContent === "Graded" &&
		document.getElementById("terminal-status").textContent.startsWith("The terminal has closed")`)
	screenshot(t, tab, artifacts(t), "time-up.png")
}

// typeKeys types into the focused element as a keyboard does: a keydown carrying the text, which the browser
// turns into a keypress unless the page handled the keydown. chromedp's SendKeys sends the keypress apart,
// and xterm.js, which handles the keydown, would see every key twice.
func typeKeys(keys string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, r := range keys {
			for _, k := range kb.Encode(r) {
				switch k.Type {
				case kb.KeyChar:
					continue
				case kb.KeyDown:
					k.Text = string(r)
				}
				if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, *k); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// pageHelpers are defined in the page through DevTools, which the page's script policy does not restrict.
const pageHelpers = `
window.shown = (id) => getComputedStyle(document.getElementById(id)).display !== "none";
window.q = (n) => document.querySelector('li[data-n="' + n + '"]');
window.terminalRows = () => [...document.querySelectorAll("#terminal .xterm-rows > div")].map((r) => r.textContent.trim());
window.terminalText = () => terminalRows().join("\n");
`

// artifacts is where the test keeps its screenshots.
func artifacts(t *testing.T) string {
	dir := os.Getenv("LAB_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	dir = filepath.Join(dir, "examweb")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func screenshot(t *testing.T, tab context.Context, dir, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// newBrowser starts headless Chromium for one test with the scoreboard test's flags (internal/class), at a
// laptop's window size.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if os.Getenv("LAB_SKIP_BROWSER") == "1" {
		t.Skip("LAB_SKIP_BROWSER=1: exam page browser test skipped")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the exam page's browser test needs Chromium at %s: run `apt-get install chromium` (or set LAB_SKIP_BROWSER=1): %v", chromiumPath, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.WindowSize(1400, 860),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	firstRun(t, ctx, "start Chromium")
	return ctx
}

// chromiumStart bounds Chromium's start: seconds on an idle machine, over 30s on a loaded 2-core CI runner.
const chromiumStart = 2 * time.Minute

// firstRun creates the browser of ctx, which lives only as long as the context of its first run: that run
// cannot carry a timeout, so the test waits for it with one.
func firstRun(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(chromiumStart):
		t.Fatalf("%s: no answer from Chromium within %s", what, chromiumStart)
	}
}

func do(t *testing.T, tab context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitFor waits until the JavaScript predicate holds, re-checking on every DOM change, for up to ten seconds.
func waitFor(t *testing.T, tab context.Context, what, predicate string) {
	t.Helper()
	const timeout = 10 * time.Second
	script := pageHelpers + fmt.Sprintf(`new Promise((resolve) => {
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
