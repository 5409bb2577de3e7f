package exam

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/scenarios"
)

// Reseeds is how many other seeds a question gets when its namespaces collide with an earlier question's.
const Reseeds = 8

// Selection is an exam's questions, in the order they are asked and broken.
type Selection struct {
	Questions []*scenarios.Instance
	// Cluster is the cluster each question is placed on: 0 the learner's, 1 a second one lab creates for the
	// exam.
	Cluster []int
	// Skipped says why scenarios of the pool were left out (another cluster-wide question, namespaces that
	// collided on every seed).
	Skipped []string
}

// Select draws up to n questions from pool for seed, spread over the journey's stages (one per stage before a
// second from any), on up to clusters clusters. Questions must be independent: at most one per cluster may
// change anything outside its own namespaces, and no two may share a namespace; a question whose namespaces
// collide is drawn again with another seed. The first cluster takes every namespaced question and one
// cluster-wide question; a second cluster-wide question goes alone to the next cluster, where it changes
// nothing another question needs. A question that changes a worker node needs another worker left for the
// other questions' Pods: on a one-worker cluster a tainted or broken worker would stop every other fix from
// rolling out, so such a question goes to a cluster of its own when there is one. Cluster-wide questions come
// last, so each is broken after every other symptom is in place and cannot keep those from appearing.
func Select(pool []*scenarios.Scenario, n int, seed int64, r scenarios.Resolver, clusters int) (*Selection, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x65786d))
	p := placer{rng: rng, r: r, shared: n > 1 && len(pool) > 1, clusters: max(clusters, 1)}
	sel := &Selection{}
	for _, sc := range spread(pool, rng) {
		if len(p.chosen) == n {
			break
		}
		if err := p.place(sc); err != nil {
			var c conflict
			if !errors.As(err, &c) {
				return nil, err
			}
			sel.Skipped = append(sel.Skipped, c.Error())
		}
	}
	if len(p.chosen) == 0 {
		return nil, fmt.Errorf("no scenario fits an exam (%d in the pool)", len(pool))
	}
	sel.Questions, sel.Cluster = p.ordered()
	return sel, nil
}

// SelectThese uses exactly the scenarios given, in order (an instructor's or a test's exam), placed as Select
// places them; a conflict among them is an error instead of a skip.
func SelectThese(scs []*scenarios.Scenario, seed int64, r scenarios.Resolver, clusters int) (*Selection, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x65786d))
	p := placer{rng: rng, r: r, shared: len(scs) > 1, clusters: max(clusters, 1)}
	for _, sc := range scs {
		if err := p.place(sc); err != nil {
			return nil, err
		}
	}
	sel := &Selection{}
	sel.Questions, sel.Cluster = p.ordered()
	return sel, nil
}

// conflict is a scenario that cannot join the exam; Select skips it.
type conflict string

func (c conflict) Error() string { return string(c) }

type placer struct {
	rng *rand.Rand
	r   scenarios.Resolver
	// shared is set when the exam may have other questions, whose Pods need a worker.
	shared bool
	// clusters is how many clusters the exam may use.
	clusters int
	chosen   []*scenarios.Instance
	prints   []Footprint
	// on is the cluster of each chosen question.
	on []int
}

func (p *placer) place(sc *scenarios.Scenario) error {
	for _, q := range p.chosen {
		if q.ID == sc.ID {
			return conflict(fmt.Sprintf("%s is already a question", sc.ID))
		}
	}
	var clash string
	for range Reseeds + 1 {
		inst, err := sc.Instantiate(p.rng.Int64N(1_000_000), p.r)
		if err != nil {
			return fmt.Errorf("exam question %s: %w", sc.ID, err)
		}
		fp, err := FootprintOf(inst)
		if err != nil {
			return err
		}
		cl, err := p.cluster(sc, fp)
		if err != nil {
			return err
		}
		clash = ""
		for i, other := range p.prints {
			if ns := fp.Collides(other); ns != "" {
				clash = fmt.Sprintf("%s and %s both use namespace %s", sc.ID, p.chosen[i].ID, ns)
				break
			}
		}
		if clash == "" {
			p.chosen, p.prints, p.on = append(p.chosen, inst), append(p.prints, fp), append(p.on, cl)
			return nil
		}
	}
	return conflict(fmt.Sprintf("%s on %d seeds", clash, Reseeds+1))
}

// cluster is where a question of footprint fp goes: a namespaced one to the first cluster, a cluster-wide one
// to the first cluster that has none yet, past the first when it would take the first's only spare worker.
func (p *placer) cluster(sc *scenarios.Scenario, fp Footprint) (int, error) {
	if !fp.ClusterWide {
		return 0, nil
	}
	var err error
	for cl := range p.clusters {
		if other := p.clusterWide(cl); other >= 0 {
			more := "lab exam --clusters 2 places a second one on a cluster of its own"
			if p.clusters > 1 {
				more = fmt.Sprintf("on at most %d clusters", p.clusters)
			}
			err = conflict(fmt.Sprintf("%s changes the whole cluster (%s), and so does %s (%s): an exam takes one such question per cluster (%s)",
				sc.ID, fp.Why, p.chosen[other].ID, p.prints[other].Why, more))
			continue
		}
		// A later cluster holds this question alone, so no other question's Pods need its workers.
		if cl == 0 && p.shared {
			if err = p.spareWorker(sc, fp); err != nil {
				var c conflict
				if !errors.As(err, &c) {
					return 0, err
				}
				continue
			}
		}
		return cl, nil
	}
	return 0, err
}

// spareWorker fails when fp changes every worker the other questions' Pods could run on.
func (p *placer) spareWorker(sc *scenarios.Scenario, fp Footprint) error {
	if len(fp.Nodes) == 0 {
		return nil
	}
	workers, err := p.r.Nodes("worker")
	if err != nil {
		return fmt.Errorf("exam question %s: %w", sc.ID, err)
	}
	for _, w := range workers {
		if !slices.Contains(fp.Nodes, w) {
			return nil
		}
	}
	// Only an exam on one cluster reports this: with two, the question goes alone to the second.
	return conflict(fmt.Sprintf("%s changes node %s, the only worker the other questions' Pods can run on (an exam takes it on a cluster with --workers 2 or more, or alone on a second cluster: lab exam --clusters 2)",
		sc.ID, strings.Join(fp.Nodes, ", ")))
}

// clusterWide is the index of the cluster-wide question on cluster cl, -1 when there is none.
func (p *placer) clusterWide(cl int) int {
	for i, fp := range p.prints {
		if fp.ClusterWide && p.on[i] == cl {
			return i
		}
	}
	return -1
}

// ordered moves the cluster-wide questions to the end, in the order they were chosen, and returns each
// question's cluster alongside.
func (p *placer) ordered() ([]*scenarios.Instance, []int) {
	var qs []*scenarios.Instance
	var on []int
	for _, wide := range []bool{false, true} {
		for i, inst := range p.chosen {
			if p.prints[i].ClusterWide == wide {
				qs, on = append(qs, inst), append(on, p.on[i])
			}
		}
	}
	return qs, on
}

// spread shuffles the pool and deals it out one stage at a time, so an exam of n questions covers n stages
// when the catalogue has them.
func spread(pool []*scenarios.Scenario, rng *rand.Rand) []*scenarios.Scenario {
	byStage := map[journey.Stage][]*scenarios.Scenario{}
	var stages []journey.Stage
	for _, sc := range pool {
		if _, ok := byStage[sc.Stage]; !ok {
			stages = append(stages, sc.Stage)
		}
		byStage[sc.Stage] = append(byStage[sc.Stage], sc)
	}
	rng.Shuffle(len(stages), func(i, j int) { stages[i], stages[j] = stages[j], stages[i] })
	for _, s := range stages {
		l := byStage[s]
		rng.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
	}
	var out []*scenarios.Scenario
	for len(out) < len(pool) {
		for _, s := range stages {
			if l := byStage[s]; len(l) > 0 {
				out, byStage[s] = append(out, l[0]), l[1:]
			}
		}
	}
	return out
}
