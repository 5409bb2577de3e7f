package examweb

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/coach"
	"github.com/cka-lab/lab/internal/exam"
)

// fakeExam is an exam in memory, its terminal a plain sh: the page's behaviour without a cluster.
type fakeExam struct {
	mu       sync.Mutex
	v        View
	graded   chan struct{}
	gradeErr error
}

func newFakeExam(left time.Duration) *fakeExam {
	return &fakeExam{graded: make(chan struct{}), v: View{ID: "20260101T000000Z", Running: true, Deadline: time.Now().Add(left), Questions: []Question{
		{Number: 1, Title: "A Deployment's Pods are stuck pulling an image", Task: "Fix deployment landing in namespace marketing.", Host: "cka2655", Weight: 4},
		{Number: 2, Title: "A Service has no endpoints", Task: "Make service shop in namespace media reach its Pods.", Host: "cka2311", Weight: 7},
		{Number: 3, Title: "Pods stay in ContainerCreating", Task: "Make deployment uploader in namespace payments run.", Host: "cka7620", Weight: 5},
	}}}
}

func (f *fakeExam) View(context.Context) (View, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.v
	v.Questions = append([]Question(nil), f.v.Questions...)
	return v, nil
}

func (f *fakeExam) Go(_ context.Context, i int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.v.Current = i
	return nil
}

func (f *fakeExam) Flag(_ context.Context, i int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.v.Questions[i].Flagged = !f.v.Questions[i].Flagged
	return nil
}

func (f *fakeExam) Grade(context.Context) (*exam.Report, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer close(f.graded)
	if f.gradeErr != nil {
		return nil, f.gradeErr
	}
	wrote := time.Now().Add(-time.Minute)
	rep := exam.Report{Exam: f.v.ID, Graded: time.Now().UTC(), PassMark: exam.PassMark, Questions: []exam.QuestionReport{
		{Number: 1, Scenario: "bad-image-tag", Title: f.v.Questions[0].Title, Weight: 4, Passed: true, Score: 7, Max: 7, TaskScore: 5, TaskMax: 5, Credit: 4, Seconds: 37},
		{Number: 2, Scenario: "service-selector-mismatch", Title: f.v.Questions[1].Title, Weight: 7, Score: 0, Max: 6, TaskMax: 4, Seconds: 12,
			Failing:  []string{"the Service selects the Deployment's Pods: service/shop has no endpoints"},
			Checks:   []grader.CheckOutcome{{Name: "the Service selects the Deployment's Pods", Group: grader.GroupChecks, Points: 4, Evidence: "service/shop has no endpoints"}},
			Solution: []string{`kubectl -n media patch service shop -p '{"spec":{"selector":{"app":"shop"}}}'`}, Why: "A Service sends traffic to the Pods its selector matches.",
			Timeline: &coach.Timeline{AfterSeconds: 29, FirstWrite: wrote, LastWrite: wrote, Writes: 1,
				WrongTurns: []coach.Note{{Kind: coach.KindWrongHost, Message: "you changed service/shop in namespace media on host cka2655; the question was on host cka2311"}},
				Log:        []coach.Write{{At: wrote, Verb: "patch", Object: "service/shop", Namespace: "media", User: "candidate@cka2655"}}}},
		{Number: 3, Scenario: "secret-volume-missing", Title: f.v.Questions[2].Title, Weight: 5, Passed: true, Score: 7, Max: 7, TaskScore: 4, TaskMax: 4, Credit: 5, Seconds: 16},
	}}
	rep.Total()
	f.v.Running, f.v.Report = false, &rep
	return &rep, nil
}

func (f *fakeExam) Shell() ([]string, []string, error) {
	return []string{"sh"}, []string{"PS1=candidate@terminal$ ", "ENV="}, nil
}

// startPage serves a page on fake until the test ends; graded receives what the server reports on grading.
func startPage(t *testing.T, fake *fakeExam) (*Server, string, chan error) {
	t.Helper()
	notes := filepath.Join(t.TempDir(), "notes.json")
	graded := make(chan error, 1)
	s, err := New(context.Background(), Options{Exam: fake, NotesFile: notes, Graded: func(_ *exam.Report, err error) { graded <- err }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s, notes, graded
}

// visitor is a browser's HTTP client: it keeps cookies and does not follow redirects, so each answer is seen.
func visitor(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// signIn spends the server's link with c, which then holds the session cookie.
func signIn(t *testing.T, s *Server, c *http.Client) {
	t.Helper()
	code, _ := get(t, c, s.URL())
	if code != http.StatusSeeOther {
		t.Fatalf("the link answered %d, want 303", code)
	}
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	return send(t, c, http.MethodGet, u, "")
}

func send(t *testing.T, c *http.Client, method, u, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, string(b)
}

// base is the server's address without the token.
func base(s *Server) string {
	u, _ := url.Parse(s.URL())
	return "http://" + u.Host
}
