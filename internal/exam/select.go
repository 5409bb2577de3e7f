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
	// Skipped says why scenarios of the pool were left out (another cluster-wide question, namespaces that
	// collided on every seed).
	Skipped []string
}

// Select draws up to n questions from pool for seed, spread over the journey's stages (one per stage before a
// second from any). Questions must be independent: at most one may change anything outside its own
// namespaces, and no two may share a namespace; a question whose namespaces collide is drawn again with
// another seed. A question that changes a worker node needs another worker left for the other questions'
// Pods: on a one-worker cluster a tainted or broken worker would stop every other fix from rolling out. The
// cluster-wide question, if any, comes last, so it is broken after every other symptom is in place and cannot
// keep those from appearing.
func Select(pool []*scenarios.Scenario, n int, seed int64, r scenarios.Resolver) (*Selection, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x65786d))
	p := placer{rng: rng, r: r, shared: n > 1 && len(pool) > 1}
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
	sel.Questions = p.ordered()
	return sel, nil
}

// SelectThese uses exactly the scenarios given, in order (an instructor's or a test's exam); a conflict among
// them is an error instead of a skip.
func SelectThese(scs []*scenarios.Scenario, seed int64, r scenarios.Resolver) (*Selection, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x65786d))
	p := placer{rng: rng, r: r, shared: len(scs) > 1}
	for _, sc := range scs {
		if err := p.place(sc); err != nil {
			return nil, err
		}
	}
	return &Selection{Questions: p.ordered()}, nil
}

// conflict is a scenario that cannot join the exam; Select skips it.
type conflict string

func (c conflict) Error() string { return string(c) }

type placer struct {
	rng *rand.Rand
	r   scenarios.Resolver
	// shared is set when the exam may have other questions, whose Pods need a worker.
	shared bool
	chosen []*scenarios.Instance
	prints []Footprint
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
		if fp.ClusterWide {
			if other := p.clusterWide(); other >= 0 {
				return conflict(fmt.Sprintf("%s changes the whole cluster (%s), and so does %s (%s): an exam takes one such question",
					sc.ID, fp.Why, p.chosen[other].ID, p.prints[other].Why))
			}
		}
		if p.shared {
			if err := p.spareWorker(sc, fp); err != nil {
				return err
			}
		}
		clash = ""
		for i, other := range p.prints {
			if ns := fp.Collides(other); ns != "" {
				clash = fmt.Sprintf("%s and %s both use namespace %s", sc.ID, p.chosen[i].ID, ns)
				break
			}
		}
		if clash == "" {
			p.chosen, p.prints = append(p.chosen, inst), append(p.prints, fp)
			return nil
		}
	}
	return conflict(fmt.Sprintf("%s on %d seeds", clash, Reseeds+1))
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
	return conflict(fmt.Sprintf("%s changes node %s, the only worker the other questions' Pods can run on (an exam takes it on a cluster with --workers 2 or more)",
		sc.ID, strings.Join(fp.Nodes, ", ")))
}

func (p *placer) clusterWide() int {
	return slices.IndexFunc(p.prints, func(fp Footprint) bool { return fp.ClusterWide })
}

// ordered moves the cluster-wide question to the end.
func (p *placer) ordered() []*scenarios.Instance {
	out := slices.Clone(p.chosen)
	if i := p.clusterWide(); i >= 0 {
		out = append(append(out[:i:i], out[i+1:]...), p.chosen[i])
	}
	return out
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
