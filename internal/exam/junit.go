package exam

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML, one test case per question (the stage is its class), so CI and
// classroom tools that read test reports can show an exam.
func WriteJUnit(w io.Writer, rep Report) error {
	s := junitSuite{
		Name: "lab exam " + rep.Exam, Tests: len(rep.Questions), Time: secs(rep.Seconds), Timestamp: rep.Graded.Format("2006-01-02T15:04:05"),
		Properties: []junitProperty{
			{"percent", fmt.Sprintf("%.1f", rep.Percent)},
			{"passMark", fmt.Sprint(rep.PassMark)},
			{"passed", fmt.Sprint(rep.Passed)},
		},
	}
	for _, q := range rep.Questions {
		c := junitCase{Name: fmt.Sprintf("Q%d %s: %s", q.Number, q.Scenario, q.Title), Classname: string(q.Stage), Time: secs(q.Seconds)}
		if !q.Passed {
			s.Failures++
			msg := fmt.Sprintf("%.1f of weight %d earned", q.Credit, q.Weight)
			if q.StoppedAt != "" {
				msg += "; stopped at " + string(q.StoppedAt)
			}
			c.Failure = &junitFailure{Message: msg, Type: "failed", Text: strings.Join(q.Failing, "\n")}
		}
		s.Cases = append(s.Cases, c)
	}
	doc := junitSuites{Name: "lab exam", Tests: s.Tests, Failures: s.Failures, Time: s.Time, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write JUnit report: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func secs(s float64) string { return fmt.Sprintf("%.3f", s) }
