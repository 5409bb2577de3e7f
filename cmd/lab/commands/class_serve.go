package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/class"
	"github.com/cka-lab/lab/internal/class/workspace"
	"github.com/cka-lab/lab/internal/exam"
)

type classServeOptions struct {
	scenarios []string
	exam      bool
	seed      int64
	hasSeed   bool
	timeLimit time.Duration
	addr      string
	dataDir   string
	title     string
	shared    string
	out       outputFlags
	tlsCert   string
	tlsKey    string
	plainHTTP bool
	maxLearn  int
	resume    bool
}

// serveInfo is what `lab class serve` prints before it serves: the join command for the class, the scoreboard
// and sign-in addresses, none of which carries a secret but the class token meant for the room. The instructor
// key is in its file; only the JSON form, for scripts, carries it too.
type serveInfo struct {
	ClassID       string    `json:"classId"`
	Title         string    `json:"title"`
	Scenarios     []string  `json:"scenarios"`
	Exam          bool      `json:"exam"`
	Seed          int64     `json:"seed"`
	TimeLimit     string    `json:"timeLimit"`
	URL           string    `json:"url"`
	Fingerprint   string    `json:"fingerprint,omitempty"`
	Token         string    `json:"token"`
	JoinCommand   string    `json:"joinCommand"`
	LoginURL      string    `json:"loginUrl"`
	KeyFile       string    `json:"instructorKeyFile"`
	InstructorKey string    `json:"instructorKey"`
	DataDir       string    `json:"dataDir"`
	SharedCluster string    `json:"sharedCluster,omitempty"`
	StartedAt     time.Time `json:"startedAt"`
	// Resumed is set when serve continues the data directory's class; Archived is where a new class moved
	// the previous one.
	Resumed  bool      `json:"resumed"`
	Archived *archived `json:"archived,omitempty"`
	// Isolation is what each learner's namespace on the shared cluster gets.
	Isolation string `json:"isolation,omitempty"`
}

// archived is the class a new class moved out of the data directory.
type archived struct {
	ClassID   string    `json:"classId"`
	StartedAt time.Time `json:"startedAt"`
	Dir       string    `json:"dir"`
	// Revoke deletes what still lets its learners into the shared cluster, when it was not ended.
	Revoke string `json:"revoke,omitempty"`
}

func newClassServeCmd(f *Factory) *cobra.Command {
	o := &classServeOptions{}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve a class on this machine until Ctrl-C: prints the learners' join command and your scoreboard link",
		Long: `serve starts the class server for learners on the LAN and keeps it running until Ctrl-C. Results are
kept in --data-dir. Each serve starts a new class: a class the directory held is first moved to its
archive/<class id>/ subdirectory, so its token and learner keys open nothing. --resume continues that class
instead (its plan, clock, token, certificate and results; the other flags that shape a class are ignored).

The server speaks https with a certificate it makes for itself (or --tls-cert and --tls-key) and prints its
fingerprint; the learners' join command carries it, so their lab reaches this server and no other. The
scoreboard is public on the LAN; its controls (pause, resume, extend, reveal a hint to everyone, export CSV
and JUnit) need the instructor key, which serve keeps in a file of the data directory and never puts in a
URL: sign in at /login with it, or send it as a bearer token.

Ending the class (the scoreboard's End class button, or POST /api/end with the key) revokes every learner's
key and shared-cluster credentials and freezes the board; Ctrl-C only stops the server. A learner who leaves
is revoked the same way. Each learner's posts and each address's join and sign-in attempts are rate-limited,
bodies are bounded, and --max-learners caps the class.

With --shared-cluster, learners need no cluster of their own: each gets a namespace (lab-<name>) on the
cluster of that kubeconfig, with admin rights in it and nothing beyond, and lab runs their scenarios there.
Only scenarios whose faults stay inside one namespace can run that way; others are refused here.`,
		Example: `  lab class serve --time-limit 60m
  lab class serve --scenarios bad-image-tag,init-missing-config-key --seed 7 --data-dir ~/classes/tuesday
  lab class serve --resume
  lab class serve --exam --time-limit 120m
  lab class serve --shared-cluster ~/.kube/room.yaml --scenarios bad-image-tag,readiness-probe-wrong-path`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.hasSeed = cmd.Flags().Changed("seed")
			plan, err := o.validate(f)
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), f, plan)
		},
	}
	c.Flags().StringSliceVar(&o.scenarios, "scenarios", nil, "the class's scenarios, in order (comma-separated ids; default: the whole catalogue)")
	c.Flags().BoolVar(&o.exam, "exam", false, "an exam drill: every learner gets the scenarios at once, on one clock, graded together")
	c.Flags().Int64Var(&o.seed, "seed", 0, "variant seed every learner gets (random when unset)")
	c.Flags().DurationVar(&o.timeLimit, "time-limit", 60*time.Minute, "time for the whole class")
	c.Flags().StringVar(&o.addr, "addr", class.DefaultAddr, "listen address (every interface by default, so the LAN can join)")
	c.Flags().StringVar(&o.dataDir, "data-dir", "", "where the class and its results are kept (default: class-server in lab's state directory)")
	c.Flags().StringVar(&o.title, "title", "", "the class's title on the scoreboard (default: CKA class)")
	c.Flags().StringVar(&o.shared, "shared-cluster", "", "kubeconfig of a cluster to give each learner a namespace on (cluster-admin)")
	o.out.addFlags(c)
	c.Flags().StringVar(&o.tlsCert, "tls-cert", "", "the server's certificate (PEM); default: one the class makes for itself")
	c.Flags().StringVar(&o.tlsKey, "tls-key", "", "the key of --tls-cert (PEM)")
	c.Flags().IntVar(&o.maxLearn, "max-learners", class.DefaultMaxLearners, "the most learners that may join")
	c.Flags().BoolVar(&o.resume, "resume", false, "continue the class the data directory holds (after a restart), instead of starting a new one")
	c.Flags().BoolVar(&o.plainHTTP, "plain-http", false, "serve without TLS: learners' keys and shared-cluster tokens then cross the network readable")
	return c
}

// validate checks the flags and the scenarios before anything listens or touches a cluster.
func (o *classServeOptions) validate(f *Factory) (class.Plan, error) {
	if err := o.out.validate(); err != nil {
		return class.Plan{}, err
	}
	if o.timeLimit < time.Minute || o.timeLimit > 24*time.Hour {
		return class.Plan{}, fmt.Errorf("--time-limit must be between 1m and 24h, got %s", o.timeLimit)
	}
	if o.maxLearn < 1 {
		return class.Plan{}, fmt.Errorf("--max-learners must be at least 1, got %d", o.maxLearn)
	}
	if o.plainHTTP && (o.tlsCert != "" || o.tlsKey != "") {
		return class.Plan{}, errors.New("--plain-http serves without a certificate: drop it or --tls-cert and --tls-key")
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return class.Plan{}, errors.New("--tls-cert and --tls-key go together: give both, or neither for a certificate the class makes itself")
	}
	if o.exam && o.shared != "" {
		return class.Plan{}, errors.New("--exam needs a cluster per learner: an exam breaks several namespaces at once, which a shared cluster's namespace cannot hold; drop --exam or --shared-cluster")
	}
	cat, err := f.Catalog()
	if err != nil {
		return class.Plan{}, err
	}
	if len(o.scenarios) == 0 && o.shared != "" {
		return class.Plan{}, errors.New("--shared-cluster needs --scenarios: name the namespace-scoped ones the class runs (for example bad-image-tag,readiness-probe-wrong-path)")
	}
	if len(o.scenarios) == 0 {
		o.scenarios = cat.IDs()
	}
	if !o.hasSeed {
		o.seed = rand.Int64N(1_000_000)
	}
	plan := class.Plan{Title: o.title, Scenarios: o.scenarios, Exam: o.exam, Seed: o.seed, TimeLimit: o.timeLimit}
	for _, id := range o.scenarios {
		if _, err := cat.Get(id); err != nil {
			return class.Plan{}, err
		}
	}
	if o.shared != "" {
		if err := confinable(f, plan); err != nil {
			return class.Plan{}, err
		}
	}
	return plan, nil
}

// confinable refuses a plan with a scenario that would reach beyond a learner's namespace, naming every such
// scenario (sorted) with its reason in one line, so the instructor fixes --scenarios once.
func confinable(f *Factory, plan class.Plan) error {
	cat, err := f.Catalog()
	if err != nil {
		return err
	}
	var refused []string
	for _, id := range slices.Sorted(slices.Values(plan.Scenarios)) {
		sc, err := cat.Get(id)
		if err != nil {
			return err
		}
		_, err = exam.Confine(sc, plan.Seed, exam.Nodeless{}, workspace.NamespaceFor("learner"))
		var r *exam.RefusedError
		switch {
		case errors.As(err, &r):
			refused = append(refused, r.Scenario+" ("+r.Reason+")")
		case err != nil:
			return err
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("a shared cluster runs only namespace-scoped scenarios; remove from --scenarios: %s", strings.Join(refused, ", "))
	}
	if _, err := workspace.IsolationFor(cat, plan.Scenarios, plan.Seed); err != nil {
		return fmt.Errorf("a learner's namespace on a shared cluster cannot hold the class: %w; remove that scenario from --scenarios", err)
	}
	return nil
}

func (o *classServeOptions) run(ctx context.Context, f *Factory, plan class.Plan) error {
	if o.dataDir == "" {
		st, err := f.Store()
		if err != nil {
			return err
		}
		o.dataDir = filepath.Join(st.Root(), "class-server")
	}
	var prov *workspace.Provisioner
	opts := class.ServerOptions{Addr: o.addr, DataDir: o.dataDir, Plan: plan, Resume: o.resume, CertFile: o.tlsCert, KeyFile: o.tlsKey, PlainHTTP: o.plainHTTP, Log: f.ErrOut, Limits: class.Limits{MaxLearners: o.maxLearn}}
	if o.shared != "" {
		var err error
		if prov, err = sharedProvisioner(ctx, o.shared); err != nil {
			return err
		}
		opts.Shared = prov
	}
	var old *archived
	if !o.resume {
		a, err := class.Archive(o.dataDir)
		if err != nil {
			return err
		}
		if a != nil {
			old = &archived{ClassID: a.Plan.ClassID, StartedAt: a.Plan.StartedAt, Dir: a.Dir}
			if a.Namespaces > 0 && !a.Plan.Ended {
				old.Revoke = "kubectl delete serviceaccounts,clusterrolebindings -A -l " + workspace.ClassLabel + "=" + a.Plan.ClassID
			}
		}
	}
	srv, err := class.NewServer(ctx, opts)
	if err != nil {
		return err
	}
	// A resumed class keeps its stored plan, which the checks above did not see.
	plan = srv.Plan()
	if prov != nil {
		prov.ClassID = plan.ClassID
		if err := confinable(f, plan); err != nil {
			return errors.Join(fmt.Errorf("class %s in %s: %w", plan.ClassID, o.dataDir, err), stopServer(ctx, srv))
		}
		if prov.Isolation, err = workspace.IsolationFor(prov.Catalog, plan.Scenarios, plan.Seed); err != nil {
			return errors.Join(err, stopServer(ctx, srv))
		}
	}
	info := serveInfo{ClassID: plan.ClassID, Title: plan.Title, Scenarios: plan.Scenarios, Exam: plan.Exam, Seed: plan.Seed,
		TimeLimit: plan.TimeLimit.String(), URL: srv.URL(), Fingerprint: srv.Fingerprint(), Token: srv.Token(), JoinCommand: srv.JoinCommand(),
		LoginURL: srv.LoginURL(), KeyFile: srv.InstructorKeyFile(), InstructorKey: srv.InstructorKey(), DataDir: o.dataDir, SharedCluster: o.shared,
		StartedAt: plan.StartedAt}
	if prov != nil {
		info.Isolation = prov.Isolation.String()
	}
	info.Resumed, info.Archived = srv.Resumed(), old
	if o.out.json() {
		if err := json.NewEncoder(f.Out).Encode(info); err != nil {
			return errors.Join(err, stopServer(ctx, srv))
		}
	} else {
		printServeInfo(f.Out, info, plan.TimeLeft(time.Now()))
	}
	return srv.Serve(ctx)
}

// sharedProvisioner connects to the shared cluster and proves the instructor's rights there before anyone joins.
func sharedProvisioner(ctx context.Context, kubeconfig string) (*workspace.Provisioner, error) {
	prov, err := workspace.New(kubeconfig)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := prov.Check(ctx); err != nil {
		return nil, err
	}
	return prov, nil
}

// stopServer closes a server that will not serve (its listener and class data).
func stopServer(ctx context.Context, srv *class.Server) error {
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	return srv.Serve(ctx)
}

func printServeInfo(w io.Writer, in serveInfo, left time.Duration) {
	kind := "practice, one scenario after the other"
	if in.Exam {
		kind = "exam, every scenario at once"
	}
	if in.Resumed {
		fmt.Fprintf(w, "Resuming class %q (%s) started at %s: %s, seed %d, %s left of %s\n", in.Title, in.ClassID,
			in.StartedAt.Local().Format(time.DateTime), kind, in.Seed, shortDuration(left), in.TimeLimit)
	} else {
		fmt.Fprintf(w, "New class %q (%s): %s, seed %d, %s left of %s\n", in.Title, in.ClassID, kind, in.Seed, shortDuration(left), in.TimeLimit)
	}
	if a := in.Archived; a != nil {
		fmt.Fprintf(w, "The previous class %s (started %s) is archived in %s: its token and learner keys no longer work.\n",
			a.ClassID, a.StartedAt.Local().Format(time.DateTime), a.Dir)
		if a.Revoke != "" {
			fmt.Fprintf(w, "  It was not ended: its learners' shared-cluster tokens work until they expire; revoke them now with\n  %s\n", a.Revoke)
		}
	}
	fmt.Fprintf(w, "Scenarios: %s\n", strings.Join(in.Scenarios, ", "))
	if in.SharedCluster != "" {
		fmt.Fprintf(w, "Shared cluster: %s (each learner gets a namespace lab-<name>)\n", in.SharedCluster)
		fmt.Fprintf(w, "Each namespace: %s\n", in.Isolation)
	}
	fmt.Fprintf(w, "\nLearners join with:\n  %s\n\n", in.JoinCommand)
	if in.Fingerprint == "" {
		fmt.Fprintf(w, "Plain HTTP (--plain-http): anyone on this network can read the learners' keys and credentials.\n\n")
	} else {
		fmt.Fprintf(w, "Server certificate SHA-256 fingerprint (what your browser shows before you accept it):\n  %s\n\n", in.Fingerprint)
	}
	fmt.Fprintf(w, "Scoreboard (safe to project; learners may watch it too):\n  %s/\n\n", in.URL)
	fmt.Fprintf(w, "Instructor controls: sign in at %s with the key in %s\n", in.LoginURL, in.KeyFile)
	fmt.Fprintf(w, "  (API clients send it as Authorization: Bearer <key>)\n\n")
	fmt.Fprintf(w, "Results are kept in %s; serve --resume continues this class after a restart. Ctrl-C stops the server.\n", in.DataDir)
}
