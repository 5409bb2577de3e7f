// Command rotation reads the e2e suite's JUnit reports against the catalogue: `unrun` lists the extras no
// report has run, `costs` records the specs' wall times in e2e/rotation/costs.json, and `plan` says what the
// checkout's next run takes.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/cka-lab/lab/e2e/rotation"
	"github.com/cka-lab/lab/scenarios"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "rotation:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: rotation unrun JUNIT... | costs JUNIT... | plan")
	}
	cat, err := scenarios.Builtin()
	if err != nil {
		return err
	}
	all := cat.All()
	switch args[0] {
	case "unrun":
		return unrun(all, args[1:])
	case "costs":
		return costs(all, args[1:])
	case "plan":
		o, err := rotation.OptionsFromEnv(context.Background(), ".")
		if err != nil {
			return err
		}
		c, err := rotation.Recorded()
		if err != nil {
			return err
		}
		fmt.Print(rotation.NewPlan(all, c, o).Describe())
		return nil
	}
	return fmt.Errorf("unknown command %q: use unrun, costs or plan", args[0])
}

// unrun prints every extra that no report ran to a verdict, and exits 1 when there is one.
func unrun(all []*scenarios.Scenario, reports []string) error {
	if len(reports) == 0 {
		return fmt.Errorf("unrun needs the JUnit reports of the runs to read")
	}
	seen, err := rotation.ReadReports(reports...)
	if err != nil {
		return err
	}
	extras := rotation.AllExtras(all)
	var missing, failed []string
	for _, s := range extras {
		ran := slices.ContainsFunc(seen[s.ID()], rotation.Outcome.Ran)
		if !ran {
			missing = append(missing, s.ID())
		}
		if slices.ContainsFunc(seen[s.ID()], func(o rotation.Outcome) bool { return o.Status == "failed" }) {
			failed = append(failed, s.ID())
		}
	}
	for _, id := range missing {
		fmt.Println("not run:", id)
	}
	for _, id := range failed {
		fmt.Println("failed in some report:", id)
	}
	fmt.Printf("%d of %d extras run by %d report(s); %d not run, %d failed in some report\n", len(extras)-len(missing), len(extras), len(reports), len(missing), len(failed))
	if len(missing) > 0 {
		os.Exit(1)
	}
	return nil
}

// costs records the wall time of every scenario spec a report passed (the last report wins) in costs.json.
func costs(all []*scenarios.Scenario, reports []string) error {
	seen, err := rotation.ReadReports(reports...)
	if err != nil {
		return err
	}
	c, err := rotation.Recorded()
	if err != nil {
		return err
	}
	var n int
	for _, sc := range all {
		for _, s := range append(rotation.Core(sc), rotation.Extras(sc)...) {
			for _, o := range seen[s.ID()] {
				if o.Status == "passed" {
					c[s.ID()] = float64(int(o.Seconds*10+0.5)) / 10
					n++
				}
			}
		}
	}
	fmt.Printf("recorded %d spec times; costs.json holds %d\n", n, len(c))
	return c.Write("e2e/rotation/costs.json")
}
