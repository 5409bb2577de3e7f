package injector

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/internal/namespace"
	"github.com/cka-lab/lab/internal/node"
	"github.com/cka-lab/lab/scenarios"
)

// Env is what faults act on.
type Env struct {
	Clients *kube.Clients
	Nodes   func() ([]nodes.Node, error)
	// Self is the path of the running lab binary: the webhook image is built from it.
	Self string
	// SecretsDir is where lab keeps the credentials it makes (the webhook's CA and key), inside its state
	// directory with 0600 files.
	SecretsDir string
}

// Injector applies scenario setup and faults, recording every prior state in its ledger first.
type Injector struct {
	env    Env
	ledger *Ledger
}

// New returns an Injector writing to ledger.
func New(env Env, ledger *Ledger) *Injector { return &Injector{env: env, ledger: ledger} }

// Ledger returns the injector's ledger.
func (i *Injector) Ledger() *Ledger { return i.ledger }

// Setup applies a setup manifest; its objects are recorded like a fault's, so reset removes them.
func (i *Injector) Setup(ctx context.Context, manifest string) error {
	return i.apply(ctx, &scenarios.ApplyFault{Manifest: manifest})
}

// Inject applies one fault.
func (i *Injector) Inject(ctx context.Context, f scenarios.Fault) error {
	kind, _ := f.Kind()
	var err error
	k := f.Spec()
	if inject, ok := injectors[reflect.TypeOf(k)]; ok {
		err = inject(ctx, i, k)
	} else {
		err = fmt.Errorf("fault has no kind")
	}
	if err != nil {
		return fmt.Errorf("inject %s: %w", kind, err)
	}
	return nil
}

// injectFunc applies one fault kind.
type injectFunc func(context.Context, *Injector, scenarios.Kind) error

// injectors holds every fault kind's injector by the kind's type, one line each.
var injectors = injectorsOf(
	injects((*Injector).apply),
	injects((*Injector).patch),
	injects(func(i *Injector, ctx context.Context, f *scenarios.DeleteFault) error {
		return i.delete(ctx, f.ObjectRef)
	}),
	injects((*Injector).scale),
	injects((*Injector).taint),
	injects((*Injector).label),
	injects(func(i *Injector, ctx context.Context, f *scenarios.NodeFault) error { return i.cordon(ctx, f.Node) }),
	injects((*Injector).nodeFile),
	injects((*Injector).stopUnit),
	injects((*Injector).webhook),
	injects((*Injector).custom),
)

// injection is one kind's injector, by the kind's type.
type injection struct {
	kind   reflect.Type
	inject injectFunc
}

// injects registers inject for the fault kind K.
func injects[K scenarios.Kind](inject func(*Injector, context.Context, K) error) injection {
	return injection{reflect.TypeFor[K](), func(ctx context.Context, i *Injector, k scenarios.Kind) error {
		return inject(i, ctx, k.(K))
	}}
}

func injectorsOf(is ...injection) map[reflect.Type]injectFunc {
	out := make(map[reflect.Type]injectFunc, len(is))
	for _, in := range is {
		out[in.kind] = in.inject
	}
	return out
}

// Revert restores every recorded prior state, newest first, dropping each entry once it is restored, so an
// interrupted revert resumes where it stopped. Namespaces the scenario created are deleted together at the end
// (their contents go with them), because waiting for each in turn is most of a reset's time.
func (i *Injector) Revert(ctx context.Context) error {
	doomed := i.ledger.createdNamespaces()
	var pending []string
	for !i.ledger.Empty() {
		e := i.ledger.Entries[len(i.ledger.Entries)-1]
		var err error
		switch {
		case e.Object != nil && doomed[e.Object.Namespace]:
		case e.Object != nil && doomed[e.Object.Name] && isNamespace(e.Object):
			err = namespace.StartDeletion(ctx, i.env.Clients, e.Object.Name)
			pending = append(pending, e.Object.Name)
		case e.Object != nil:
			err = i.revertObject(ctx, e.Object)
		case e.Node != nil:
			err = i.revertNode(ctx, e.Node)
		case e.File != nil:
			err = i.revertFile(ctx, e.File)
		case e.Unit != nil:
			err = i.revertUnit(ctx, e.Unit)
		case e.StaticPod != nil:
			err = i.revertStaticPod(ctx, e.StaticPod)
		case e.Sysctl != nil:
			err = i.revertSysctl(ctx, e.Sysctl)
		case e.Joined != nil:
			err = i.rejoin(ctx, e.Joined)
		case e.EtcdData != nil:
			err = i.revertEtcdData(ctx, e.EtcdData)
		}
		if err != nil {
			return fmt.Errorf("revert %s: %w", e, err)
		}
		if err := i.ledger.pop(); err != nil {
			return err
		}
	}
	return namespace.WaitGone(ctx, i.env.Clients, pending)
}

func (i *Injector) node(name string) (nodes.Node, error) { return node.Find(i.env.Nodes, name) }

// waitTimeout bounds every wait a fault does on the cluster.
const waitTimeout = 90 * time.Second
