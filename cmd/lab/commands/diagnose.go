package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/class"
	"github.com/cka-lab/lab/internal/journey"
	"github.com/cka-lab/lab/internal/session"
	"github.com/cka-lab/lab/scenarios"
)

type diagnoseOptions struct {
	out    outputFlags
	answer journey.Answer
}

type diagnoseJSON struct {
	Stage    journey.Stage `json:"stage"`
	Object   string        `json:"object,omitempty"`
	Correct  bool          `json:"correct"`
	Recorded bool          `json:"recorded"`
	Answer   struct {
		Stage  journey.Stage `json:"stage"`
		Object string        `json:"object,omitempty"`
	} `json:"answer"`
}

func newDiagnoseCmd(f *Factory) *cobra.Command {
	o := &diagnoseOptions{}
	c := &cobra.Command{
		Use:   "diagnose STAGE [KIND/NAME]",
		Short: fmt.Sprintf("Name where the Pod's journey stopped, before fixing it (a right first answer is worth +%d)", session.DiagnosisBonus),
		Long: `diagnose records your answer to "where did the Pod stop?": the stage of the journey, and optionally
the object that blocks it. Stages accept common aliases (rbac, cni, image, pvc, ...); objects accept
kubectl's short kinds (deploy/web, cm/app-config, pvc/data, vwc/policy). Only your first diagnosis of an
attempt counts; later ones are answered but not recorded. ` + "`lab check`" + ` adds the bonus to the score.`,
		Example: `  lab diagnose scheduling
  lab diagnose runtime deploy/web
  lab diagnose admission vwc/resource-policy -o json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args); err != nil {
				return err
			}
			return o.run(cmd, f)
		},
	}
	o.out.addFlags(c)
	return c
}

func (o *diagnoseOptions) complete(args []string) error {
	if err := o.out.validate(); err != nil {
		return err
	}
	object := ""
	if len(args) == 2 {
		object = args[1]
	}
	a, err := journey.ParseAnswer(args[0], object)
	o.answer = a
	return err
}

func (o *diagnoseOptions) run(cmd *cobra.Command, f *Factory) error {
	sess, unlock, err := lockedSession(cmd.Context(), f)
	if err != nil {
		return err
	}
	defer unlock()
	a, inst, err := currentInstance(cmd.Context(), f, sess)
	if err != nil {
		return err
	}
	d := session.Diagnosis{At: time.Now().UTC(), Stage: o.answer.Stage, Object: o.answer.Object, Correct: o.correct(inst)}
	first := a.Diagnosis == nil
	if first {
		a.Diagnosis = &d
		if err := sess.Save(a); err != nil {
			return err
		}
		reportToClass(cmd.Context(), f, class.EventDiagnose, a, nil)
	}
	if o.out.json() {
		out := diagnoseJSON{Stage: d.Stage, Object: d.Object, Correct: d.Correct, Recorded: first}
		out.Answer.Stage, out.Answer.Object = inst.Stage, inst.Diagnosis.Object
		return json.NewEncoder(f.Out).Encode(out)
	}
	o.print(f.Out, inst)
	if !first {
		prev := a.Diagnosis
		fmt.Fprintf(f.Out, "Not recorded: your first diagnosis (%s at %s, %s) is the one that counts.\n",
			prev.String(), prev.At.Local().Format("15:04"), verdict(prev.Correct))
	}
	return nil
}

func (o *diagnoseOptions) correct(inst *scenarios.Instance) bool {
	return o.answer.Correct(inst.Stage, inst.Diagnosis.Object)
}

func (o *diagnoseOptions) print(w io.Writer, inst *scenarios.Instance) {
	green, red := paint(w, color.FgGreen), paint(w, color.FgRed)
	want := inst.Stage
	blocker := ""
	if inst.Diagnosis.Object != "" {
		blocker = fmt.Sprintf("; %s blocks it", inst.Diagnosis.Object)
	}
	switch {
	case o.correct(inst):
		fmt.Fprintf(w, "%s Right: the journey stops at %s%s.\n", green("✓"), want.Title(), blocker)
	case o.answer.Stage == want:
		fmt.Fprintf(w, "%s The stage is right (%s), but the object is not: %s blocks it, not %s.\n", red("✗"), want.Title(), inst.Diagnosis.Object, o.answer.Object)
	default:
		fmt.Fprintf(w, "%s Wrong: you said %s; the journey stops at %s%s.\n", red("✗"), o.answer.Stage.Title(), want.Title(), blocker)
	}
}

func verdict(correct bool) string {
	if correct {
		return "right"
	}
	return "wrong"
}
