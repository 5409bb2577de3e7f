package rotation

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"

	"github.com/onsi/ginkgo/v2/reporters"
)

// SpecEntry is the name of the report entry in which each scenario spec states its Spec.ID, so a JUnit report
// names it whatever ginkgo makes of the spec's text and labels.
const SpecEntry = "spec"

// Outcome is what one report says of one spec.
type Outcome struct {
	Report  string
	Status  string
	Seconds float64
}

// ReadReports reads ginkgo JUnit reports and returns, by Spec.ID, what each said of the scenario specs.
func ReadReports(paths ...string) (map[string][]Outcome, error) {
	out := map[string][]Outcome{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read JUnit report: %w", err)
		}
		var suites reporters.JUnitTestSuites
		if err := xml.Unmarshal(b, &suites); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, s := range suites.TestSuites {
			for _, tc := range s.TestCases {
				if tc.Properties == nil {
					continue
				}
				raw := tc.Properties.WithName(SpecEntry)
				var id string
				if raw == "" || json.Unmarshal([]byte(raw), &id) != nil {
					continue
				}
				out[id] = append(out[id], Outcome{Report: p, Status: tc.Status, Seconds: tc.Time})
			}
		}
	}
	return out, nil
}

// Ran says whether an outcome ran the spec to a verdict (passed or failed), not skipped it.
func (o Outcome) Ran() bool { return o.Status == "passed" || o.Status == "failed" }
