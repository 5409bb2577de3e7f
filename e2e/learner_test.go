package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/creack/pty"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cka-lab/lab/e2e/framework"
	"github.com/cka-lab/lab/internal/exam"
	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/scenarios"
)

type diagnoseOut struct {
	Stage    string `json:"stage"`
	Correct  bool   `json:"correct"`
	Recorded bool   `json:"recorded"`
}

type finalCheckJSON struct {
	checkJSON
	DiagnosisBonus int `json:"diagnosisBonus"`
	FinalMax       int `json:"finalMax"`
}

type examStatus struct {
	Phase     string `json:"phase"`
	Current   int    `json:"current"`
	Questions []struct {
		Scenario string            `json:"scenario"`
		Weight   int               `json:"weight"`
		Host     string            `json:"host"`
		Cluster  string            `json:"cluster"`
		Flagged  bool              `json:"flagged"`
		Seed     int64             `json:"seed"`
		Values   map[string]string `json:"values"`
	} `json:"questions"`
}

// The learner's side of lab, through the built binary: diagnose before fixing, explain the journey, pay for a
// hint at a terminal, see the solution, stop and find the attempt in the progress; then a two-question exam.
var _ = Describe("the learner's tools", Ordered, Label("learner"), func() {
	cat, err := scenarios.Builtin()
	if err != nil {
		panic(err)
	}
	image, _ := cat.Get("bad-image-tag")
	probe, _ := cat.Get("readiness-probe-wrong-path")

	shell := func(ctx context.Context, steps []string) {
		GinkgoHelper()
		for _, step := range steps {
			r := lab.Shell(ctx, step)
			Expect(r.Code).To(Equal(0), "step: %s\n%s", step, r)
		}
	}

	It("diagnoses, explains, hints, solves, checks and stops an attempt", func(ctx SpecContext) {
		lab.MustRun(ctx, "start", image.ID, "--seed", fmt.Sprint(seed))
		DeferCleanup(func(ctx SpecContext) { lab.Run(ctx, "reset") })
		st := framework.JSON[statusJSON](lab.MustRun(ctx, "status", "-o", "json"))
		inst, err := image.WithValues(st.Attempt.Seed, st.Attempt.Values)
		Expect(err).NotTo(HaveOccurred())
		app := inst.Values["app"]

		By("recording only the first diagnosis, matching kubectl's short kinds")
		d := framework.JSON[diagnoseOut](lab.MustRun(ctx, "diagnose", "image", "deploy/"+app, "-o", "json"))
		Expect(d).To(Equal(diagnoseOut{Stage: "image", Correct: true, Recorded: true}))
		r := lab.MustRun(ctx, "diagnose", "scheduling")
		Expect(r.Stdout).To(ContainSubstring("Wrong"))
		Expect(r.Stdout).To(ContainSubstring("Not recorded"))

		By("explaining where the journey stops")
		res := framework.JSON[journey.Result](lab.MustRun(ctx, "explain", "-o", "json"))
		Expect(res.Stopped).To(Equal(journey.Image), "%+v", res)
		Expect(lab.MustRun(ctx, "explain").Stdout).To(ContainSubstring("✗ image pull (app containers)"))

		By("asking before revealing a hint when there is no --yes")
		r = lab.Run(ctx, "hint")
		Expect(r.Code).NotTo(Equal(0), "%s", r)
		Expect(r.Stderr).To(ContainSubstring("lab hint --yes"))
		r = hintAtTerminal(ctx, "y\n")
		Expect(r.Code).To(Equal(0), "%s", r)
		Expect(r.Stdout).To(ContainSubstring("Reveal it? [y/N]"))
		Expect(r.Stdout).To(ContainSubstring(inst.Hints[0]))
		Expect(lab.MustRun(ctx, "status").Stdout).To(MatchRegexp(`Hints:\s+1`))

		By("showing the solution, which fixes it")
		r = lab.MustRun(ctx, "solution")
		Expect(r.Stdout).To(ContainSubstring("Reference solution (stage: image)"))
		shell(ctx, inst.Solution)
		res = framework.JSON[journey.Result](lab.MustRun(ctx, "explain", "-o", "json"))
		Expect(res.Stopped).To(BeEmpty(), "after the fix the whole journey passes: %+v", res)

		By("crediting the diagnosis and charging the hint")
		c := framework.JSON[finalCheckJSON](lab.MustRun(ctx, "check", "-o", "json"))
		Expect(c.Passed).To(BeTrue())
		Expect(c.DiagnosisBonus).To(Equal(1))
		Expect(c.FinalScore).To(Equal(c.Score), "one hint (-1) and a right diagnosis (+1)")
		Expect(c.FinalMax).To(Equal(c.Max + 1))
		Expect(lab.MustRun(ctx, "check", "--wait", "0s").Stdout).To(ContainSubstring("Diagnosis: image (correct, +1)"))

		By("recording the attempt on stop, then resetting")
		stop := framework.JSON[map[string]any](lab.MustRun(ctx, "stop", "-o", "json"))
		Expect(stop).To(HaveKeyWithValue("recorded", true))
		Expect(stop).To(HaveKeyWithValue("clean", true))
		Expect(lab.MustRun(ctx, "status").Stdout).To(ContainSubstring("no scenario running"))
		progress := framework.JSON[struct {
			Stages []struct {
				Stage            string `json:"stage"`
				Passes           int    `json:"passes"`
				Hints            int    `json:"hints"`
				DiagnosesCorrect int    `json:"diagnosesCorrect"`
			} `json:"stages"`
		}](lab.MustRun(ctx, "progress", "-o", "json"))
		Expect(progress.Stages).To(ContainElement(And(
			HaveField("Stage", "image"), HaveField("Passes", BeNumerically(">=", 1)),
			HaveField("Hints", BeNumerically(">=", 1)), HaveField("DiagnosesCorrect", BeNumerically(">=", 1)))))
		Expect(lab.MustRun(ctx, "list", "--stage", "image").Stdout).To(MatchRegexp(image.ID + `\s+repair\s+easy\s+5m\s+\d+/\d+ in `))
	}, SpecTimeout(8*time.Minute))

	It("sits a two-question exam: one question fixed, one not, scores 50%", func(ctx SpecContext) {
		Expect(image.Weight).To(Equal(probe.Weight), "the 50%% needs two questions of equal weight")
		r := lab.Run(ctx, "exam", "--scenarios", image.ID+","+probe.ID, "--duration", "30m", "--seed", fmt.Sprint(seed))
		Expect(r.Code).To(Equal(0), "%s", r)
		DeferCleanup(func(ctx SpecContext) { lab.Run(ctx, "exam", "stop", "--discard") })
		Expect(r.Stdout).To(ContainSubstring("Question 1/2"))

		By("closing the practice commands and showing the time left")
		r = lab.Run(ctx, "check")
		Expect(r.Code).NotTo(Equal(0))
		Expect(r.Stderr).To(ContainSubstring("not available in an exam"))
		Expect(r.Stderr).To(MatchRegexp(`exam: \d+:\d\d left, question 1/2`))

		By("moving to the second question and flagging it")
		Expect(lab.MustRun(ctx, "exam", "next").Stdout).To(ContainSubstring("Question 2/2"))
		lab.MustRun(ctx, "exam", "flag")
		st := framework.JSON[examStatus](lab.MustRun(ctx, "exam", "status", "-o", "json"))
		Expect(st.Phase).To(Equal("active"))
		Expect(st.Current).To(Equal(2))
		Expect(st.Questions).To(HaveLen(2))
		Expect(st.Questions[1].Scenario).To(Equal(probe.ID))
		Expect(st.Questions[1].Flagged).To(BeTrue())

		By("giving each question its own host, reached by ssh with the host's own identity")
		host := st.Questions[1].Host
		Expect(host).To(MatchRegexp(`^cka\d{4}$`))
		Expect(st.Questions[0].Host).NotTo(Equal(host))
		whoami := lab.MustRun(ctx, "ssh", host, "--", "kubectl auth whoami -o jsonpath={.status.userInfo.username}")
		Expect(whoami.Stdout).To(Equal("candidate@" + host))

		By("fixing only the readiness question with its reference solution, on its host")
		inst, err := probe.WithValues(st.Questions[1].Seed, st.Questions[1].Values)
		Expect(err).NotTo(HaveOccurred())
		for _, step := range inst.Solution {
			lab.MustRun(ctx, "ssh", host, "--", step)
		}

		By("grading both at once")
		junit := filepath.Join(GinkgoT().TempDir(), "exam.xml")
		r = lab.Run(ctx, "exam", "grade", "-o", "json", "--junit", junit)
		Expect(r.Code).To(Equal(1), "50%% is below the pass mark\n%s", r)
		rep := framework.JSON[exam.Report](r)
		Expect(rep.Percent).To(Equal(50.0))
		Expect(rep.Passed).To(BeFalse())
		Expect(rep.PassMark).To(Equal(66))
		Expect(rep.Questions[0].Passed).To(BeFalse())
		Expect(rep.Questions[1].Passed).To(BeTrue())
		Expect(rep.Questions[1].Flagged).To(BeTrue())
		Expect(rep.Questions[1].Seconds).To(BeNumerically(">", 0))
		xml, err := os.ReadFile(junit)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(xml)).To(ContainSubstring(`tests="2" failures="1"`))

		By("keeping the report and resetting on stop")
		Expect(lab.MustRun(ctx, "exam", "status").Stdout).To(ContainSubstring("Total: 50.0%"))
		r = lab.MustRun(ctx, "exam", "stop")
		Expect(r.Stderr).To(ContainSubstring("matches its baseline"))
		Expect(lab.Run(ctx, "exam", "status").Stderr).To(ContainSubstring("no exam on cluster"))
		Expect(lab.Run(ctx, "ssh", host, "--", "true").Code).NotTo(Equal(0), "the exam's hosts end with it")
	}, SpecTimeout(10*time.Minute))
})

// hintAtTerminal runs `lab hint` with a pseudo-terminal as its stdin, as a learner at a shell, and answers the
// confirmation prompt.
func hintAtTerminal(ctx context.Context, answer string) framework.Result {
	GinkgoHelper()
	ptmx, tty, err := pty.Open()
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = ptmx.Close() }()
	cmd := lab.Command(ctx, nil, "hint")
	var out, errOut bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &out, &errOut
	start := time.Now()
	Expect(cmd.Start()).To(Succeed())
	_ = tty.Close()
	_, err = ptmx.WriteString(answer)
	Expect(err).NotTo(HaveOccurred())
	r := framework.Result{Took: time.Since(start)}
	if err := cmd.Wait(); err != nil {
		r.Code = cmd.ProcessState.ExitCode()
	}
	r.Stdout, r.Stderr, r.Took = out.String(), errOut.String(), time.Since(start)
	return r
}
