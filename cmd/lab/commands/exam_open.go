package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/examweb"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/scenarios"
)

type examOpenOptions struct {
	noBrowser bool

	sess  *session.Session
	exam  *session.Exam
	insts []*scenarios.Instance
}

func newExamOpenCmd(f *Factory) *cobra.Command {
	o := &examOpenOptions{}
	c := &cobra.Command{
		Use:   "open",
		Short: "Sit the exam in a browser: questions, clock, notes and the exam's terminal, on a page of this machine",
		Long: `open serves the exam as one page, the way the exam's remote desktop feels: the questions with their
weights, flags and your done marks; the current task and its host; a clock to the deadline; notes per
question (kept with the exam in lab's state directory); and the exam's terminal, the one ` + "`lab exam shell`" + `
opens, where ssh <host> reaches a question's host. Moving to a question makes it the current one, as
ssh to its host does. When time is up the page and this command grade the exam at once, the terminal
closes and the page shows the result.

The page listens on 127.0.0.1 only. Its link carries a one-time token: the first browser to open it gets in,
and the link then works no more (run open again for a new one). A desktop's browser opens it by itself.
Ctrl-C stops the page; the exam's clock runs on.`,
		Example: `  lab exam open
  lab exam open --no-browser    # print the link only
  lab exam --duration 30m --web # start an exam and open it`,
		Args: cobra.NoArgs,
		RunE: runE(f, o),
	}
	c.Flags().BoolVar(&o.noBrowser, "no-browser", false, "print the page's link without opening a browser")
	return c
}

func (o *examOpenOptions) complete(f *Factory, cmd *cobra.Command, _ []string) error {
	return o.load(cmd.Context(), f)
}

// load reads the exam and its instances under the lock, and lets go of it: the page's clicks and the
// terminal's ssh take it again, briefly.
func (o *examOpenOptions) load(ctx context.Context, f *Factory) error {
	sess, unlock, err := lockedSession(ctx, f)
	if err != nil {
		return err
	}
	defer unlock()
	o.sess = sess
	o.exam, o.insts, err = loadExam(f, sess)
	return err
}

func (o *examOpenOptions) validate() error {
	if o.exam.Phase == session.PhaseGraded {
		return nil
	}
	if err := requireRunning(o.sess, o.exam); err != nil {
		return err
	}
	for _, q := range o.exam.Questions {
		if q.Host == "" {
			return errors.New("this exam has no hosts (started by an older lab): use `lab exam status` and `lab ssh <node>`")
		}
	}
	return nil
}

func (o *examOpenOptions) run(ctx context.Context, f *Factory) error {
	st, name := o.sess.Store, o.sess.Cluster.Name
	s, err := examweb.New(ctx, examweb.Options{
		Exam:      &examPage{f: f, sess: o.sess, id: o.exam.ID, insts: o.insts},
		NotesFile: session.ExamNotesFile(st, name, o.exam.ID),
		Graded:    func(rep *exam.Report, err error) { printPageGrade(f, rep, err) },
		Log:       f.ErrOut,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(f.Out, "Exam page: %s\n", s.URL())
	fmt.Fprintln(f.ErrOut, "The link works once, in one browser; `lab exam open` again gives a new one. Ctrl-C stops the page; the exam's clock runs on.")
	if !examweb.Assets() {
		fmt.Fprintf(f.ErrOut, "Note: %s.\n", examweb.NoAssets)
	}
	if !o.noBrowser {
		openBrowser(ctx, s.URL())
	}
	return s.Serve(ctx)
}

// printPageGrade prints the grade the page's server came to, as `lab exam grade` prints it.
func printPageGrade(f *Factory, rep *exam.Report, err error) {
	if err != nil {
		fmt.Fprintf(f.ErrOut, "error: could not grade the exam: %v; run `lab exam grade`\n", err)
		return
	}
	printReport(f.Out, rep)
	fmt.Fprintln(f.ErrOut, "The page shows the result; Ctrl-C stops it, `lab exam stop` resets the cluster.")
}

// openBrowser opens url in the desktop's browser when there is a desktop; the printed link serves otherwise.
func openBrowser(ctx context.Context, url string) {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	} else if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return
	}
	c := exec.CommandContext(ctx, path, url)
	if c.Start() == nil {
		go func() { _ = c.Wait() }()
	}
}

// examPage is the exam as its page sees it: read from the state directory on every request, as `lab exam
// status` reads it, with the instances (titles and tasks, which never change) loaded once.
type examPage struct {
	f     *Factory
	sess  *session.Session
	id    string
	insts []*scenarios.Instance
}

func (p *examPage) read() (*session.Exam, error) {
	e, err := session.ReadExam(p.sess.Store, p.sess.Cluster.Name)
	if err != nil {
		return nil, err
	}
	if e == nil || e.ID != p.id {
		return nil, fmt.Errorf("exam %s on cluster %s has been stopped: %w", p.id, p.sess.Cluster.Name, examweb.ErrEnded)
	}
	return e, nil
}

func (p *examPage) View(context.Context) (examweb.View, error) {
	e, err := p.read()
	if err != nil {
		return examweb.View{}, err
	}
	now := time.Now()
	v := examweb.View{ID: e.ID, Running: e.Running(), Deadline: e.Deadline(), Current: e.Current}
	for i, q := range e.Questions {
		v.Questions = append(v.Questions, examweb.Question{Number: i + 1, Title: p.insts[i].Title, Task: strings.TrimSpace(p.insts[i].Task),
			Host: q.Host, Weight: q.Weight, Flagged: q.Flagged, Seconds: e.SpentOn(i, now).Seconds()})
	}
	if e.Phase == session.PhaseGraded {
		v.Report, err = p.sess.ExamReport()
	}
	return v, err
}

// Go moves to question i as ssh to its host does: the same bookkeeping of the time per question.
func (p *examPage) Go(ctx context.Context, i int) error {
	e, err := p.read()
	if err != nil {
		return err
	}
	got, err := session.FocusHost(ctx, p.sess.Store, p.sess.Cluster.Name, e.Questions[i].Host)
	if err == nil && got < 0 {
		err = examweb.ErrEnded
	}
	return err
}

func (p *examPage) Flag(ctx context.Context, i int) error {
	_, err := session.FlagQuestion(ctx, p.sess.Store, p.sess.Cluster.Name, i)
	if errors.Is(err, session.ErrExamEnded) {
		return examweb.ErrEnded
	}
	return err
}

// Grade grades as the next lab command after the deadline does: with the fixes put through the cluster's
// own disturbances, and the class told.
func (p *examPage) Grade(ctx context.Context) (*exam.Report, error) {
	sess, e, insts, unlock, err := examSession(ctx, p.f)
	if err != nil {
		// Graded meanwhile (`lab exam grade`, or another lab command after the deadline): that grade stands.
		if rep, rerr := session.ReadExamReport(p.sess.Store, p.sess.Cluster.Name); rerr == nil && rep != nil && rep.Exam == p.id {
			return rep, nil
		}
		return nil, err
	}
	defer unlock()
	return gradeExam(ctx, p.f, sess, e, insts, true)
}

func (p *examPage) Shell() ([]string, []string, error) {
	argv, env, err := session.ExamHostsOf(p.sess.Store, p.sess.Cluster.Name).Shell("", nil)
	if err != nil {
		return nil, nil, fmt.Errorf("the exam's terminal: %w", err)
	}
	return argv, env, nil
}
