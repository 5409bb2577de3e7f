package examweb

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/cka-lab/lab/internal/coach"
	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/examhost"
	"github.com/cka-lab/lab/internal/survive"
)

// Review is a graded exam as its review shows it: the report (results, checks with their evidence, the
// learner's writes, the coaching, the reference solutions) and the learner's own notes.
type Review struct {
	Report *exam.Report
	Notes  map[int]Note
}

// ReadNotes reads the notes the exam's page kept in file; none when it has none.
func ReadNotes(file string) (map[int]Note, error) {
	n, err := openNotes(file)
	if err != nil {
		return nil, err
	}
	return n.all(), nil
}

//go:embed review.html.tmpl
var reviewSource string

// reviewPage is one HTML file with its style inline and no script: it opens from a disk, a mail or an
// archive as it opened in the browser.
var reviewPage = template.Must(template.New("review").Funcs(template.FuncMap{
	"clock":   func(seconds float64) string { return clock(time.Duration(seconds * float64(time.Second))) },
	"at":      WriteAt,
	"host":    examhost.HostOf,
	"survive": survive.Describe,
	"percent": func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"note":    func(r Review, n int) Note { return r.Notes[n] },
}).Parse(reviewSource))

// WriteReview writes r as one self-contained HTML page.
func WriteReview(w io.Writer, r Review) error {
	if err := reviewPage.Execute(w, r); err != nil {
		return fmt.Errorf("write the exam's review: %w", err)
	}
	return nil
}

// WriteAt is when a write came, counted from the exam's start as the timeline counts: its first write came
// AfterSeconds in.
func WriteAt(tl *coach.Timeline, w coach.Write) string {
	start := tl.FirstWrite.Add(-time.Duration(tl.AfterSeconds * float64(time.Second)))
	return clock(w.At.Sub(start))
}

// clock shows a duration as an exam timer does: 1:52:07, or 4:05 under an hour.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s%3600/60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
