package examweb

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/cka-lab/lab/internal/browsertest"
)

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

// newBrowser starts headless Chromium for one test at a laptop's window size.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	return browsertest.Start(t, "the exam page's browser test", chromedp.WindowSize(1400, 860))
}

func do(t *testing.T, tab context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	browsertest.Do(t, tab, what, actions...)
}

// waitFor waits until the JavaScript predicate, which may call the page helpers, holds.
func waitFor(t *testing.T, tab context.Context, what, predicate string) {
	t.Helper()
	browsertest.WaitFor(t, tab, what, pageHelpers, predicate)
}
