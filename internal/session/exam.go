package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cka-lab/lab/grader"
	"github.com/cka-lab/lab/internal/baseline"
	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/examhost"
	"github.com/cka-lab/lab/internal/pki"
	"github.com/cka-lab/lab/internal/state"
	"github.com/cka-lab/lab/internal/state/history"
	"github.com/cka-lab/lab/scenarios"
)

const examFile = "exam.json"

// ExamVersion is the format of the exam record.
const ExamVersion = 1

// PhaseGraded is an exam whose grade is in: its cluster stays broken until `lab exam stop`.
const PhaseGraded Phase = "graded"

// Exam is an exam drill in progress on a cluster: several scenarios broken at once, one clock.
type Exam struct {
	V        int           `json:"v"`
	ID       string        `json:"id"`
	Seed     int64         `json:"seed"`
	Phase    Phase         `json:"phase"`
	Error    string        `json:"error,omitempty"`
	Created  time.Time     `json:"created"`
	Started  time.Time     `json:"started,omitempty"`
	Duration time.Duration `json:"duration"`
	// Current is the question the learner is on, since CurrentSince: the time between switches is what each
	// question is charged.
	Current      int            `json:"current"`
	CurrentSince time.Time      `json:"currentSince,omitempty"`
	Graded       time.Time      `json:"graded,omitempty"`
	Questions    []ExamQuestion `json:"questions"`
	// Clusters are the clusters lab created for this exam beside its own, recorded before they are created:
	// stopping the exam, or deleting its cluster, deletes them.
	Clusters []string `json:"clusters,omitempty"`
}

// ExamQuestion is one scenario instance of an exam.
type ExamQuestion struct {
	Scenario string            `json:"scenario"`
	Seed     int64             `json:"seed"`
	Values   map[string]string `json:"values"`
	Weight   int               `json:"weight"`
	// Host is the exam host the question is solved on (empty in records from before hosts).
	Host string `json:"host,omitempty"`
	// Cluster is the cluster the question is on when it is one of the exam's Clusters, empty on the exam's own.
	Cluster string        `json:"cluster,omitempty"`
	Flagged bool          `json:"flagged"`
	Spent   time.Duration `json:"spent"`
}

// Deadline is when the exam's time runs out.
func (e *Exam) Deadline() time.Time { return e.Started.Add(e.Duration) }

// Running reports an exam whose clock runs: started and not graded.
func (e *Exam) Running() bool { return e.Phase == PhaseActive }

// Expired reports a running exam whose time is up.
func (e *Exam) Expired(now time.Time) bool { return e.Running() && !now.Before(e.Deadline()) }

// Left is the time left, never below zero.
func (e *Exam) Left(now time.Time) time.Duration { return max(e.Deadline().Sub(now), 0) }

// Go makes question i (wrapping around) the current one, charging the time since the last switch to the
// question that was current.
func (e *Exam) Go(i int, now time.Time) {
	e.charge(now)
	n := len(e.Questions)
	e.Current = ((i % n) + n) % n
}

// StopClock charges the current question up to now (or the deadline); calling it again charges nothing.
func (e *Exam) StopClock(now time.Time) { e.charge(now) }

func (e *Exam) charge(now time.Time) {
	end := now
	if end.After(e.Deadline()) {
		end = e.Deadline()
	}
	if end.After(e.CurrentSince) {
		e.Questions[e.Current].Spent += end.Sub(e.CurrentSince)
		e.CurrentSince = end
	}
}

// SpentOn is the time charged to question i so far, counting the current question's running time.
func (e *Exam) SpentOn(i int, now time.Time) time.Duration {
	d := e.Questions[i].Spent
	if i == e.Current && e.Running() {
		end := now
		if end.After(e.Deadline()) {
			end = e.Deadline()
		}
		d += max(end.Sub(e.CurrentSince), 0)
	}
	return d
}

// ReadExam returns the exam record of a cluster, nil when there is none. It needs no cluster, so every lab
// command can show the time left cheaply.
func ReadExam(st *state.Store, cluster string) (*Exam, error) {
	var e Exam
	err := st.Read(cluster, examFile, &e)
	if errors.Is(err, state.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// Exam returns the cluster's exam, nil when there is none.
func (s *Session) Exam() (*Exam, error) { return ReadExam(s.Store, s.Cluster.Name) }

// SaveExam writes the exam record back.
func (s *Session) SaveExam(e *Exam) error { return s.Store.Write(s.Cluster.Name, examFile, e) }

// ExamOptions say how StartExam chooses an exam's questions and how long it lasts.
type ExamOptions struct {
	// Pool is what the questions are drawn from: up to Questions of them spread over the stages, or with
	// Exactly every one of them, in order.
	Pool      []*scenarios.Scenario
	Exactly   bool
	Questions int
	Seed      int64
	Duration  time.Duration
	// Clusters is how many clusters the exam may use (0 is 1): with 2, a second question that changes the
	// whole cluster goes to a cluster lab creates for the exam.
	Clusters int
}

// MaxClusters is the most clusters an exam uses: a second kind cluster is what a small machine (2 cores)
// affords beside the first.
const MaxClusters = 2

// examClusterSuffix names the cluster lab creates for an exam after the exam's own.
const examClusterSuffix = "-exam2"

// ExamCluster is the name of the cluster lab creates for an exam on cluster.
func ExamCluster(cluster string) string { return cluster + examClusterSuffix }

// ExamOwner is the cluster whose exam created cluster, "" when no exam did (or it has ended).
func ExamOwner(st *state.Store, cluster string) (string, error) {
	owner, ok := strings.CutSuffix(cluster, examClusterSuffix)
	if !ok {
		return "", nil
	}
	e, err := ReadExam(st, owner)
	if err != nil || e == nil || !slices.Contains(e.Clusters, cluster) {
		return "", err
	}
	return owner, nil
}

// StartExam starts an exam: one reset and baseline, then the questions are chosen against this cluster (what
// its nodes allow), a second cluster is created when a question is placed there, and each question is broken
// in order on its cluster with the same setup, injection and symptom wait as Start. The record is written
// before anything changes, so an interrupted start is repaired by `lab exam stop`.
func (s *Session) StartExam(ctx context.Context, o ExamOptions) (*Exam, []*scenarios.Instance, error) {
	if s.Cluster.Shared() {
		return nil, nil, errSharedExam
	}
	if e, err := s.Exam(); err != nil {
		return nil, nil, err
	} else if e != nil && e.Phase != PhaseGraded {
		return nil, nil, fmt.Errorf("an exam is already on cluster %s (%s): `lab exam status` shows it, `lab exam stop` ends it", s.Cluster.Name, e.Phase)
	}
	if err := s.resetIfNeeded(ctx); err != nil {
		return nil, nil, err
	}
	if err := s.ensureBaseline(ctx); err != nil {
		return nil, nil, err
	}
	sel, err := s.chooseQuestions(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	insts := sel.Questions
	now := time.Now().UTC()
	e := &Exam{V: ExamVersion, ID: now.Format("20060102T150405Z"), Seed: o.Seed, Phase: PhaseStarting, Created: now, Duration: o.Duration}
	hosts := examhost.Names(o.Seed, len(insts))
	for i, inst := range insts {
		q := ExamQuestion{Scenario: inst.ID, Seed: inst.Seed, Values: inst.Values, Weight: inst.Weight, Host: hosts[i]}
		if sel.Cluster[i] > 0 {
			q.Cluster = ExamCluster(s.Cluster.Name)
			if !slices.Contains(e.Clusters, q.Cluster) {
				e.Clusters = append(e.Clusters, q.Cluster)
			}
		}
		e.Questions = append(e.Questions, q)
	}
	if err := s.claimExamClusters(ctx, e.Clusters); err != nil {
		return nil, nil, err
	}
	if err := s.SaveExam(e); err != nil {
		return nil, nil, err
	}
	failed := func(err error, doing string) error {
		e.Phase, e.Error = PhaseFailed, err.Error()
		err = withFailureSaved(err, func() error { return s.SaveExam(e) })
		return fmt.Errorf("%s: %w (run `lab exam stop` to restore the cluster)", doing, err)
	}
	on := map[string]*Session{"": s}
	for _, name := range e.Clusters {
		if on[name], err = s.createExamCluster(ctx, e, insts, name, o.Pool); err != nil {
			return nil, nil, failed(err, "create the exam's cluster "+name)
		}
	}
	for i, inst := range insts {
		s.Status.Info("Question %d/%d: %s (%s)", i+1, len(insts), inst.ID, inst.Stage)
		if err := on[e.Questions[i].Cluster].breakCluster(ctx, inst); err != nil {
			return nil, nil, failed(err, fmt.Sprintf("start exam question %d (%s)", i+1, inst.ID))
		}
	}
	// The hosts come last, once the clock's start is known: their credentials expire at the deadline.
	e.Started = shownAt(ctx)
	e.CurrentSince = e.Started
	if err := s.Status.Step(fmt.Sprintf("Preparing %d exam hosts", len(hosts)), func() error { return s.prepareHosts(ctx, e, on) }); err != nil {
		return nil, nil, failed(err, "prepare the exam's hosts")
	}
	e.Phase = PhaseActive
	return e, insts, s.SaveExam(e)
}

// chooseQuestions selects the exam's questions, places them on its clusters, and says which were left out and
// why.
func (s *Session) chooseQuestions(ctx context.Context, o ExamOptions) (*exam.Selection, error) {
	r := resolver{ctx: ctx, c: s.Cluster}
	var sel *exam.Selection
	var err error
	if o.Exactly {
		sel, err = exam.SelectThese(o.Pool, o.Seed, r, o.Clusters)
	} else {
		sel, err = exam.Select(o.Pool, o.Questions, o.Seed, r, o.Clusters)
	}
	if err != nil {
		return nil, err
	}
	for _, sk := range sel.Skipped {
		s.Status.Info("  left out: %s", sk)
	}
	if !o.Exactly && len(sel.Questions) < o.Questions {
		s.Status.Info("The catalogue offers %d independent questions; the exam has %d.", len(sel.Questions), len(sel.Questions))
	}
	return sel, nil
}

// claimExamClusters refuses names that are already clusters: the exam deletes its clusters when it ends, so
// it takes none it did not create, not even a lab cluster of that name.
func (s *Session) claimExamClusters(ctx context.Context, names []string) error {
	for _, name := range names {
		if s.Provider == nil {
			return fmt.Errorf("this exam needs a second cluster, which lab cannot create here: run `lab exam --clusters 1`")
		}
		exists, err := s.Provider.Exists(ctx, name)
		if err != nil {
			return err
		}
		if exists {
			return fmt.Errorf("cluster %s exists, and an exam on %s creates and deletes a cluster of that name: delete it (`lab cluster delete --name %s`) or run `lab exam --clusters 1`",
				name, s.Cluster.Name, name)
		}
	}
	return nil
}

// examClusterWorkers is the size of a cluster lab creates for an exam: it holds one question alone, so one
// worker is all that question's faults and Pods need, and all a small machine affords beside the first.
const examClusterWorkers = 1

// createExamCluster creates the exam's cluster name with the images its questions use, returns a session on
// it with its baseline recorded, and instantiates its questions again against it: their values name its nodes,
// not the first cluster's.
func (s *Session) createExamCluster(ctx context.Context, e *Exam, insts []*scenarios.Instance, name string, pool []*scenarios.Scenario) (*Session, error) {
	images := slices.Clone(scenarios.BaseImages)
	for i, q := range e.Questions {
		if q.Cluster == name {
			images = append(images, insts[i].Images...)
		}
	}
	s.Status.Info("A second cluster, %s, for a question that needs a cluster of its own", name)
	c, _, err := s.Provider.Create(ctx, name, cluster.CreateWithWorkers(examClusterWorkers), cluster.CreateWithImages(images))
	if err != nil {
		return nil, err
	}
	on := s.on(c)
	if err := on.ensureBaseline(ctx); err != nil {
		return nil, err
	}
	r := resolver{ctx: ctx, c: c}
	for i, q := range e.Questions {
		if q.Cluster != name {
			continue
		}
		j := slices.IndexFunc(pool, func(sc *scenarios.Scenario) bool { return sc.ID == q.Scenario })
		if j < 0 {
			return nil, fmt.Errorf("exam question %s is not in the pool", q.Scenario)
		}
		inst, err := pool[j].Instantiate(q.Seed, r)
		if err != nil {
			return nil, fmt.Errorf("exam question %s on cluster %s: %w", q.Scenario, name, err)
		}
		insts[i], e.Questions[i].Values = inst, inst.Values
	}
	return on, s.SaveExam(e)
}

// on is a session on another of the exam's clusters, sharing this one's store, status and binary.
func (s *Session) on(c *cluster.Cluster) *Session {
	return &Session{Cluster: c, Store: s.Store, Status: s.Status, Self: s.Self, Provider: s.Provider, Grade: s.Grade}
}

// examClusters returns a session on each of the exam's clusters by the name its questions record ("" for this
// session's).
func (s *Session) examClusters(ctx context.Context, e *Exam) (map[string]*Session, error) {
	out := map[string]*Session{"": s}
	for _, name := range e.Clusters {
		if s.Provider == nil {
			return nil, fmt.Errorf("the exam's cluster %s: lab cannot reach clusters here", name)
		}
		c, err := s.Provider.Get(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("the exam's cluster %s: %w (`lab exam stop --discard` ends the exam without it)", name, err)
		}
		out[name] = s.on(c)
	}
	return out, nil
}

// ByCluster groups the exam's question indexes by the cluster they are on, the exam's own ("") first.
func (e *Exam) ByCluster() []ClusterQuestions {
	out := []ClusterQuestions{{}}
	for i, q := range e.Questions {
		j := slices.IndexFunc(out, func(g ClusterQuestions) bool { return g.Name == q.Cluster })
		if j < 0 {
			out, j = append(out, ClusterQuestions{Name: q.Cluster}), len(out)
		}
		out[j].Index = append(out[j].Index, i)
	}
	return slices.DeleteFunc(out, func(g ClusterQuestions) bool { return len(g.Index) == 0 })
}

// ClusterQuestions are the questions (indexes into Exam.Questions) on one of the exam's clusters.
type ClusterQuestions struct {
	Name  string
	Index []int
}

// ToggleFlag flags question n (1-based; 0 is the current one) to come back to, or unflags it, and returns
// its index.
func (e *Exam) ToggleFlag(n int) (int, error) {
	i := e.Current
	if n > 0 {
		if n > len(e.Questions) {
			return 0, fmt.Errorf("the exam has %d questions, not %d", len(e.Questions), n)
		}
		i = n - 1
	}
	e.Questions[i].Flagged = !e.Questions[i].Flagged
	return i, nil
}

// ExamInstances rebuilds the exam's scenario instances from the catalogue and the recorded values.
func (s *Session) ExamInstances(cat *scenarios.Catalog, e *Exam) ([]*scenarios.Instance, error) {
	var out []*scenarios.Instance
	for _, q := range e.Questions {
		sc, err := cat.Get(q.Scenario)
		if err != nil {
			return nil, err
		}
		inst, err := sc.WithValues(q.Seed, q.Values)
		if err != nil {
			return nil, err
		}
		out = append(out, inst)
	}
	return out, nil
}

// examReportFile keeps the last exam's report next to its record, for `lab exam status` after grading.
const examReportFile = "exam-report.json"

// GradeExam ends the exam: it stops the clock, grades every question in one child grading run (one grader
// question per scenario, each with its own settle time), with disturb puts the passing fixes through the
// cluster's own disturbances (survive.Run), scores them, marks the exam graded, keeps the report
// and adds each question to the learner's history.
func (s *Session) GradeExam(ctx context.Context, e *Exam, insts []*scenarios.Instance, disturb bool) (*exam.Report, *grader.Outcome, error) {
	now := time.Now().UTC()
	e.StopClock(now)
	var out *grader.Outcome
	// A session on each of the exam's clusters serves its grading and its coaching.
	var on map[string]*Session
	if err := s.Status.Step(fmt.Sprintf("Grading %d question(s)", len(insts)), func() error {
		var err error
		if on, err = s.examClusters(ctx, e); err != nil {
			return fmt.Errorf("grade exam %s: %w", e.ID, err)
		}
		out, err = s.gradeQuestions(ctx, e, on, insts, disturb)
		return err
	}); err != nil {
		return nil, nil, err
	}
	end := now
	if end.After(e.Deadline()) {
		end = e.Deadline()
	}
	var qs []exam.Question
	for i, q := range e.Questions {
		qs = append(qs, exam.Question{Number: i + 1, Scenario: q.Scenario, Stage: insts[i].Stage, Weight: q.Weight, Flagged: q.Flagged, Spent: q.Spent,
			Solution: insts[i].Solution, Why: strings.TrimSpace(insts[i].Explanation)})
	}
	rep := exam.Score(e.ID, qs, out, end.Sub(e.Started), now)
	coachExam(ctx, e, on, insts, &rep)
	e.Phase, e.Graded = PhaseGraded, now
	if err := s.SaveExam(e); err != nil {
		return nil, nil, err
	}
	if err := s.Store.Write(s.Cluster.Name, examReportFile, rep); err != nil {
		return nil, nil, err
	}
	var recs []history.Record
	for i, q := range rep.Questions {
		recs = append(recs, history.Record{
			At: now, Event: history.EventExam, Scenario: q.Scenario, Stage: q.Stage, Seed: e.Questions[i].Seed, Started: e.Started,
			Passed: q.Passed, Score: q.Score, Max: q.Max, Graded: true, Seconds: q.Seconds, Exam: e.ID,
		})
	}
	s.addHistory(recs...)
	return &rep, out, nil
}

// gradeQuestions grades each of the exam's clusters (on: a session on each, by name, "" the exam's own) in a
// child of its own, pointed at that cluster, and merges the outcomes; each cluster's reports go under the
// exam's directory, another cluster's in a subdirectory named after it.
func (s *Session) gradeQuestions(ctx context.Context, e *Exam, on map[string]*Session, insts []*scenarios.Instance, disturb bool) (*grader.Outcome, error) {
	dir := filepath.Join(s.Store.ClusterDir(s.Cluster.Name), "exams", e.ID, time.Now().UTC().Format("20060102T150405.000"))
	var outs []*grader.Outcome
	for _, g := range e.ByCluster() {
		cs := on[g.Name]
		plan := grader.Plan{Cluster: cs.Cluster.Name}
		var gi []*scenarios.Instance
		for _, i := range g.Index {
			q := grader.QuestionFor(insts[i], -1)
			q.Shown = e.Started
			plan.Questions, gi = append(plan.Questions, q), append(gi, insts[i])
		}
		gdir := filepath.Join(dir, g.Name)
		out, err := cs.grade(ctx, plan, gdir, nil)
		if err != nil {
			return nil, fmt.Errorf("grade exam %s on cluster %s: %w", e.ID, cs.Cluster.Name, err)
		}
		if disturb {
			// The exam's step line already says it grades; each disturbance would only overwrite it.
			quiet := func(_ string, fn func() error) error { return fn() }
			if err := cs.survive(ctx, plan, out, gi, gdir, quiet); err != nil {
				return nil, fmt.Errorf("grade exam %s on cluster %s: %w", e.ID, cs.Cluster.Name, err)
			}
		}
		outs = append(outs, out)
	}
	order := make([]string, len(e.Questions))
	for i, q := range e.Questions {
		order[i] = q.Scenario
	}
	return mergeOutcomes(outs, order), nil
}

// mergeOutcomes is one outcome of the gradings of an exam's clusters: every question in the exam's order (the
// scenario ids in order), passed when all are, with the first cluster's report files. The second cluster's
// question may come before a cluster-wide question of the first, and readers of the outcome (the class
// report) take its questions in the exam's order.
func mergeOutcomes(outs []*grader.Outcome, order []string) *grader.Outcome {
	m := *outs[0]
	m.Questions, m.Survive = slices.Clone(m.Questions), slices.Clone(m.Survive)
	for _, o := range outs[1:] {
		m.Passed = m.Passed && o.Passed
		m.Score += o.Score
		m.Max += o.Max
		m.Questions = append(m.Questions, o.Questions...)
		m.Survive = append(m.Survive, o.Survive...)
	}
	slices.SortStableFunc(m.Questions, func(a, b grader.QuestionOutcome) int {
		return cmp.Compare(slices.Index(order, a.ID), slices.Index(order, b.ID))
	})
	return &m
}

// ExamReport returns the report of the cluster's graded exam, nil when there is none.
func (s *Session) ExamReport() (*exam.Report, error) { return ReadExamReport(s.Store, s.Cluster.Name) }

// ReadExamReport returns the report of cluster's last graded exam, nil when there is none; it needs no cluster.
func ReadExamReport(st *state.Store, cluster string) (*exam.Report, error) {
	var rep exam.Report
	err := st.Read(cluster, examReportFile, &rep)
	if errors.Is(err, state.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &rep, nil
}

// EndExam resets the cluster to its baseline, deletes the clusters lab created for the exam and forgets the
// exam, and says whether it reset. A practice attempt started after a graded exam has already reset the exam's
// faults: it is left alone and only the exam is forgotten.
func (s *Session) EndExam(ctx context.Context, e *Exam) (residue []baseline.Residue, reset bool, err error) {
	if a, err := s.Current(ctx); err != nil {
		return nil, false, err
	} else if a != nil && e.Phase == PhaseGraded {
		return nil, false, s.forgetExam(ctx, e)
	}
	residue, err = s.stopExam(ctx, e)
	return residue, true, err
}

// stopExam returns the cluster to its baseline and forgets the exam once nothing differs.
func (s *Session) stopExam(ctx context.Context, e *Exam) ([]baseline.Residue, error) {
	residue, err := s.Reset(ctx)
	if err != nil || len(residue) > 0 {
		return residue, err
	}
	return nil, s.forgetExam(ctx, e)
}

// forgetExam deletes the clusters lab created for the exam, then removes the exam record and its hosts,
// leaving the cluster as it is. Deleting beats resetting them for reuse: they hold only the exam's questions,
// an idle kind cluster keeps its nodes' memory on a small machine, and the next exam that needs one creates it
// in under a minute.
func (s *Session) forgetExam(ctx context.Context, e *Exam) error {
	if err := DeleteExamClusters(ctx, s.Provider, e); err != nil {
		return err
	}
	if err := s.ExamHosts().Remove(); err != nil {
		return err
	}
	if err := s.Store.Remove(s.Cluster.Name, warningsFile); err != nil {
		return err
	}
	return s.Store.Remove(s.Cluster.Name, examFile)
}

// DeleteExamClusters deletes the clusters lab created for exam e; one never made (a start interrupted before
// it) or already gone is no error.
func DeleteExamClusters(ctx context.Context, p *cluster.Provider, e *Exam) error {
	if e == nil || len(e.Clusters) == 0 {
		return nil
	}
	if p == nil {
		return fmt.Errorf("the exam's clusters %v: lab cannot delete clusters here", e.Clusters)
	}
	for _, name := range e.Clusters {
		if err := p.Delete(ctx, name); err != nil && !errors.Is(err, cluster.ErrNoCluster) {
			return fmt.Errorf("delete the exam's cluster %s: %w", name, err)
		}
	}
	return nil
}

// ExamHosts are the hosts of the cluster's exam.
func (s *Session) ExamHosts() examhost.Hosts { return ExamHostsOf(s.Store, s.Cluster.Name) }

// ExamHostsOf are the hosts of cluster's exam; reading them needs no cluster.
func ExamHostsOf(st *state.Store, cluster string) examhost.Hosts {
	return examhost.Hosts{Dir: filepath.Join(st.ClusterDir(cluster), "exam-hosts")}
}

// prepareHosts gives every host an identity under the CA of its question's cluster (on, by the name its
// questions record) that expires at the exam's deadline, and a shell whose ssh calls this lab back for the exam.
func (s *Session) prepareHosts(ctx context.Context, e *Exam, on map[string]*Session) error {
	cas := map[string]*pki.CA{}
	var hosts []examhost.Host
	for _, q := range e.Questions {
		c := on[q.Cluster].Cluster
		if cas[q.Cluster] == nil {
			cp, err := c.ControlPlane()
			if err != nil {
				return err
			}
			if cas[q.Cluster], err = pki.ClusterCA(ctx, cp); err != nil {
				return fmt.Errorf("cluster %s: %w", c.Name, err)
			}
		}
		hosts = append(hosts, examhost.Host{Name: q.Host, Server: c.Config.Host, CA: cas[q.Cluster]})
	}
	root, err := filepath.Abs(s.Store.Root())
	if err != nil {
		return err
	}
	setup := examhost.Setup{Lab: s.Self, Env: []string{"LAB_STATE_DIR=" + root, "LAB_CLUSTER=" + s.Cluster.Name}, Expires: e.Deadline()}
	return s.ExamHosts().Prepare(ctx, setup, hosts)
}

// HostCluster is the cluster whose nodes host's `ssh <node>` reaches: its question's, cluster (the exam's own)
// when it has none or no running exam has that host.
func HostCluster(st *state.Store, cluster, host string) (string, error) {
	e, err := ReadExam(st, cluster)
	if err != nil || e == nil {
		return cluster, err
	}
	for _, q := range e.Questions {
		if q.Host == host && q.Cluster != "" {
			return q.Cluster, nil
		}
	}
	return cluster, nil
}

// warningsFile records which time warnings an exam has given, apart from the exam's record: the warning is
// given by whichever lab command runs first after its time, without the cluster's lock, and a race between
// two of them costs at most a repeated warning.
const warningsFile = "exam-warnings.json"

// Warnings are the minutes left at which the exam warns, as the exam's proctor does.
var Warnings = []int{30, 15, 5}

type examWarnings struct {
	Exam   string `json:"exam"`
	Warned []int  `json:"warned"`
}

// DueWarning returns the minutes-left warning that cluster's exam e has reached at now and not given yet, and
// records it as given (with every earlier one); 0 when none is due. A warning longer than the exam itself is
// never given.
func DueWarning(st *state.Store, cluster string, e *Exam, now time.Time) (int, error) {
	if !e.Running() {
		return 0, nil
	}
	var w examWarnings
	if err := st.Read(cluster, warningsFile, &w); err != nil && !errors.Is(err, state.ErrNotFound) {
		return 0, err
	}
	if w.Exam != e.ID {
		w = examWarnings{Exam: e.ID}
	}
	due := 0
	for _, m := range Warnings {
		at := time.Duration(m) * time.Minute
		if e.Duration > at && e.Left(now) <= at && !slices.Contains(w.Warned, m) {
			w.Warned = append(w.Warned, m)
			due = m
		}
	}
	if due == 0 {
		return 0, nil
	}
	return due, st.Write(cluster, warningsFile, w)
}

// FocusHost makes the question solved on host the current one, as the candidate moves to it by ssh, charging
// the time since the last switch to the question that was current; it returns the question's index, -1 when no
// running exam has that host. It takes the cluster's lock only briefly and needs no cluster.
func FocusHost(ctx context.Context, st *state.Store, cluster, host string) (int, error) {
	lock, err := st.LockCluster(ctx, cluster, 5*time.Second)
	if err != nil {
		return -1, err
	}
	defer func() { _ = lock.Unlock() }()
	e, err := ReadExam(st, cluster)
	if err != nil || e == nil || !e.Running() {
		return -1, err
	}
	i := slices.IndexFunc(e.Questions, func(q ExamQuestion) bool { return q.Host == host })
	if i < 0 || i == e.Current {
		return i, nil
	}
	e.Go(i, time.Now().UTC())
	return i, st.Write(cluster, examFile, e)
}
