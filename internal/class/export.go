package class

import (
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// handleExportCSV writes one row per learner and scenario, for the instructor's spreadsheet; graded_by says
// whether the server graded the status itself or the learner's lab reported it.
func (s *Server) handleExportCSV(w http.ResponseWriter, _ *http.Request) {
	b := s.boardState()
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", b.Plan.ClassID+".csv"))
	records := [][]string{{"learner", "scenario", "status", "score", "max_score", "checks_passed", "checks_total",
		"time_used_seconds", "hints_taken", "diagnosis_correct", "last_event_at", "graded_by"}}
	for _, learner := range b.Learners {
		for _, scenario := range b.Plan.Scenarios {
			c := learner.Cells[scenario]
			last := ""
			if !c.LastAt.IsZero() {
				last = c.LastAt.UTC().Format(time.RFC3339)
			}
			diagnosis := ""
			if c.DiagnosisCorrect != nil {
				diagnosis = strconv.FormatBool(*c.DiagnosisCorrect)
			}
			records = append(records, []string{spreadsheetSafe(learner.Name), spreadsheetSafe(scenario), c.Status,
				strconv.Itoa(c.Score), strconv.Itoa(c.MaxScore), strconv.Itoa(c.ChecksPassed), strconv.Itoa(c.ChecksTotal),
				strconv.Itoa(int(c.TimeUsed.Seconds())), strconv.Itoa(c.HintsTaken), diagnosis, last, c.Source})
		}
	}
	// A write error means the instructor's download went away; there is nobody left to tell.
	_ = csv.NewWriter(w).WriteAll(records)
}

// spreadsheetSafe stops a spreadsheet from running a name like "-cmd" as a formula.
func spreadsheetSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		return "'" + s
	}
	return s
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
}

// handleExportJUnit writes one testsuite per learner and one testcase per scenario, failed unless passed,
// so CI-style report viewers can show a class.
func (s *Server) handleExportJUnit(w http.ResponseWriter, _ *http.Request) {
	b := s.boardState()
	doc := junitSuites{Name: b.Plan.Title}
	for _, learner := range b.Learners {
		suite := junitSuite{Name: learner.Name, Time: seconds(learner.TimeUsed)}
		for _, scenario := range b.Plan.Scenarios {
			c := learner.Cells[scenario]
			tc := junitCase{Name: scenario, ClassName: learner.Name, Time: seconds(c.TimeUsed)}
			if c.Status != statusPassed {
				tc.Failure = &junitFailure{Type: c.Status, Message: failureMessage(c)}
				suite.Failures++
			}
			suite.Cases = append(suite.Cases, tc)
			suite.Tests++
		}
		doc.Suites = append(doc.Suites, suite)
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
	}
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", b.Plan.ClassID+".junit.xml"))
	// As for CSV, a write error only means the download went away.
	_, _ = fmt.Fprint(w, xml.Header)
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	_ = enc.Encode(doc)
}

func failureMessage(c cell) string {
	switch c.Status {
	case statusNotStarted:
		return "not started"
	case statusInProgress:
		return "started, never checked"
	}
	return fmt.Sprintf("check failed: %d/%d checks, score %d/%d", c.ChecksPassed, c.ChecksTotal, c.Score, c.MaxScore)
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
