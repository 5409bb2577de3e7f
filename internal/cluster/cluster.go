// Package cluster creates, finds and deletes lab clusters: kind clusters, made through kind's Go API, that
// carry lab's marker so every later command can prove a cluster is lab's own before it changes anything.
package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	kindlog "sigs.k8s.io/kind/pkg/log"

	"github.com/cka-lab/lab/internal/cluster/hostenv"
	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/internal/pki"
	"github.com/cka-lab/lab/internal/state"
	"github.com/cka-lab/lab/internal/ui"
)

const (
	// DefaultName is the kind cluster name lab uses unless told otherwise.
	DefaultName = "lab"
	// DefaultNodeImage is pinned to a CKA-current Kubernetes; LAB_NODE_IMAGE or --image override it.
	DefaultNodeImage = "kindest/node:v1.35.4"
	// MarkerNamespace holds lab's own objects, which scenarios and resets never touch.
	MarkerNamespace = "lab-system"
	// MarkerName is the ConfigMap that proves a cluster is lab's.
	MarkerName = "lab-cluster"
	recordFile = "cluster.json"
)

// Phase of a cluster record: a record left "creating" means lab was interrupted while creating it.
type Phase string

// The phases of a cluster record.
const (
	PhaseCreating Phase = "creating"
	PhaseReady    Phase = "ready"
)

// Record is what lab keeps about a cluster it created.
type Record struct {
	Name       string             `json:"name"`
	ID         string             `json:"id"`
	Phase      Phase              `json:"phase"`
	NodeImage  string             `json:"nodeImage"`
	Workers    int                `json:"workers"`
	Created    time.Time          `json:"created"`
	Kubeconfig string             `json:"kubeconfig"`
	Host       hostenv.Conditions `json:"host"`
}

// Cluster is a lab cluster whose ownership has been proven.
type Cluster struct {
	Record
	*kube.Clients
	provider *kindcluster.Provider
	// Namespace is set for a shared cluster (see Attach): the only namespace lab may change there.
	Namespace string

	nodesMu sync.Mutex
	nodes   []nodes.Node
}

// Over returns the cluster rec over clients and the nodes ns, which it lists without asking kind: for tests
// that fake both.
func Over(rec Record, clients *kube.Clients, ns []nodes.Node) *Cluster {
	return &Cluster{Record: rec, Clients: clients, nodes: ns}
}

// Nodes lists the cluster's kind nodes (containers). The list is read once per Cluster: kind asks Docker
// once and then once more per node for its role, and the injector and the grader ask for a node before every
// node file and every node check; a cluster's containers stay the same until it is created again, which
// makes a new Cluster.
func (c *Cluster) Nodes() ([]nodes.Node, error) {
	if c.Shared() {
		return nil, fmt.Errorf("%s is a namespace of a shared cluster: lab reaches no node there", c.Name)
	}
	c.nodesMu.Lock()
	defer c.nodesMu.Unlock()
	if c.nodes != nil {
		return slices.Clone(c.nodes), nil
	}
	ns, err := c.provider.ListInternalNodes(c.Name)
	if err != nil {
		return nil, fmt.Errorf("list nodes of %s: %w", c.Name, err)
	}
	if len(ns) > 0 {
		c.nodes = ns
	}
	return slices.Clone(ns), nil
}

// Node returns the kind node with the given name (a Kubernetes node name is its container name), or the
// name without the cluster's prefix ("worker" for lab-worker), as `lab ssh` takes it.
func (c *Cluster) Node(name string) (nodes.Node, error) {
	ns, err := c.Nodes()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range ns {
		names = append(names, n.String())
	}
	for _, want := range []string{name, c.Name + "-" + name} {
		if i := slices.Index(names, want); i >= 0 {
			return ns[i], nil
		}
	}
	return nil, fmt.Errorf("cluster %s has no node %q (nodes: %s)", c.Name, name, strings.Join(names, ", "))
}

// Workers returns the worker nodes, sorted by name.
func (c *Cluster) Workers() ([]nodes.Node, error) {
	ns, err := c.Nodes()
	if err != nil {
		return nil, err
	}
	ws, err := nodeutils.SelectNodesByRole(ns, "worker")
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ws, func(a, b nodes.Node) int { return cmpString(a.String(), b.String()) })
	return ws, nil
}

// ControlPlane returns the cluster's control-plane node, where kubeadm keeps the CA and the API server runs.
func (c *Cluster) ControlPlane() (nodes.Node, error) {
	ns, err := c.Nodes()
	if err != nil {
		return nil, err
	}
	cps, err := nodeutils.SelectNodesByRole(ns, "control-plane")
	if err != nil || len(cps) == 0 {
		return nil, fmt.Errorf("cluster %s has no control-plane node: %v", c.Name, err)
	}
	return cps[0], nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Provider manages lab clusters.
type Provider struct {
	kind   *kindcluster.Provider
	store  *state.Store
	status *ui.Status
	logger kindlog.Logger
}

// ProviderOption configures a Provider.
type ProviderOption func(*Provider)

// WithStore sets where cluster records live.
func WithStore(s *state.Store) ProviderOption { return func(p *Provider) { p.store = s } }

// WithStatus sets where step lines go.
func WithStatus(s *ui.Status) ProviderOption { return func(p *Provider) { p.status = s } }

// WithKindLogger passes a logger to kind (its own status lines while it creates nodes).
func WithKindLogger(l kindlog.Logger) ProviderOption { return func(p *Provider) { p.logger = l } }

// NewProvider returns a Provider using Docker.
func NewProvider(opts ...ProviderOption) *Provider {
	p := &Provider{status: ui.Discard(), logger: kindlog.NoopLogger{}}
	for _, o := range opts {
		o(p)
	}
	p.kind = kindcluster.NewProvider(kindcluster.ProviderWithDocker(), kindcluster.ProviderWithLogger(p.logger))
	return p
}

// Errors the CLI and tests tell apart.
var (
	ErrNoCluster = errors.New("no such cluster")
	ErrNotLab    = errors.New("not a lab cluster")
	ErrStopped   = errors.New("node containers stopped")
)

// NotLabError names a cluster lab refuses to touch and why.
type NotLabError struct {
	Name   string
	Reason string
}

func (e *NotLabError) Error() string {
	return fmt.Sprintf("kind cluster %q was not created by lab (%s): lab never changes a cluster it did not create; "+
		"use another name (--name) or delete that cluster yourself (`kind delete cluster --name %s`)", e.Name, e.Reason, e.Name)
}

func (e *NotLabError) Unwrap() error { return ErrNotLab }

// Exists reports whether a kind cluster (lab's or not) has that name.
func (p *Provider) Exists(ctx context.Context, name string) (bool, error) {
	names, err := p.kind.List()
	if err != nil {
		return false, dockerFirst(ctx, fmt.Errorf("list kind clusters: %w", err))
	}
	return slices.Contains(names, name), nil
}

// dockerFirst returns Docker's own error when Docker is why err happened: its one-line error says what to
// do, kind's and the docker CLI's quote a command.
func dockerFirst(ctx context.Context, err error) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, dockerErr := hostenv.CheckDocker(ctx); dockerErr != nil {
		return dockerErr
	}
	return err
}

// kindNodes counts the node containers of every kind cluster on the machine, lab's or not.
func (p *Provider) kindNodes() (int, error) {
	names, err := p.kind.List()
	if err != nil {
		return 0, fmt.Errorf("list kind clusters: %w", err)
	}
	n := 0
	for _, name := range names {
		nodes, err := p.kind.ListNodes(name)
		if err != nil {
			return 0, fmt.Errorf("list nodes of kind cluster %s: %w", name, err)
		}
		n += len(nodes)
	}
	return n, nil
}

// Get returns the named cluster after proving it is lab's: lab's record exists, and the marker read through
// lab's own kubeconfig carries the record's ID.
func (p *Provider) Get(ctx context.Context, name string) (*Cluster, error) {
	// One docker call says both whether the cluster exists (kind's clusters are its labelled containers) and
	// whether its nodes run: every lab command starts here.
	states, err := nodeContainers(ctx, name)
	if err != nil {
		return nil, dockerFirst(ctx, err)
	}
	exists := len(states) > 0
	var rec Record
	recErr := p.store.Read(name, recordFile, &rec)
	if !exists {
		if recErr == nil {
			return nil, fmt.Errorf("lab cluster %q is gone (its node containers were removed): recreate it with `lab cluster create --name %s`: %w", name, name, ErrNoCluster)
		}
		return nil, fmt.Errorf("no lab cluster %q: create it with `lab cluster create --name %s`: %w", name, name, ErrNoCluster)
	}
	if errors.Is(recErr, state.ErrNotFound) {
		return nil, &NotLabError{Name: name, Reason: "lab has no record of it"}
	}
	if recErr != nil {
		return nil, recErr
	}
	if stopped := notRunning(states); len(stopped) > 0 {
		return nil, fmt.Errorf("lab cluster %q has stopped node containers (%s), as after a Docker restart: "+
			"run `lab cluster create --name %s` to start them again: %w", name, strings.Join(stopped, ", "), name, ErrStopped)
	}
	c, err := p.connect(rec)
	if err != nil {
		return nil, err
	}
	if err := c.verifyMarker(ctx); err != nil {
		var notLab *NotLabError
		if errors.As(err, &notLab) {
			return nil, err
		}
		// The API server may be down on purpose (a control-plane scenario), and lab ssh, check and reset must
		// still work then: the cluster CA on the control-plane node proves it is the cluster lab created.
		if caErr := c.verifyCA(ctx); errors.As(caErr, &notLab) {
			return nil, caErr
		} else if caErr != nil {
			return nil, fmt.Errorf("%w (and from its nodes: %v)", err, caErr)
		}
	}
	return c, nil
}

// verifyCA proves ownership without the API server: the CA in lab's kubeconfig is the CA on the cluster's
// control-plane node. A kind cluster recreated under the same name by anyone else has a new CA.
func (c *Cluster) verifyCA(ctx context.Context) error {
	want := bytes.TrimSpace(c.Config.CAData)
	if len(want) == 0 {
		return fmt.Errorf("lab's kubeconfig %s has no embedded CA", c.Kubeconfig)
	}
	cp, err := c.ControlPlane()
	if err != nil {
		return err
	}
	var out bytes.Buffer
	cmd := cp.CommandContext(ctx, "cat", pki.CACertPath)
	cmd.SetStdout(&out)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("read %s on %s: %w", pki.CACertPath, cp, err)
	}
	if !bytes.Equal(bytes.TrimSpace(out.Bytes()), want) {
		return &NotLabError{Name: c.Name, Reason: "its cluster CA is not the one in lab's kubeconfig"}
	}
	return nil
}

func (p *Provider) connect(rec Record) (*Cluster, error) {
	if _, err := os.Stat(rec.Kubeconfig); err != nil {
		// kind can always produce the kubeconfig again; lab's file may have been removed by hand.
		if err := p.kind.ExportKubeConfig(rec.Name, rec.Kubeconfig, false); err != nil {
			return nil, fmt.Errorf("write kubeconfig for %s: %w", rec.Name, err)
		}
	}
	clients, err := kube.FromKubeconfig(rec.Kubeconfig)
	if err != nil {
		return nil, err
	}
	return &Cluster{Record: rec, Clients: clients, provider: p.kind}, nil
}

func (c *Cluster) verifyMarker(ctx context.Context) error {
	// Short, because an API server that is down makes client-go retry until the deadline, and every lab ssh
	// during a control-plane scenario would wait it out; a slow answer falls back to verifyCA, no weaker proof.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cm, err := c.Kube.CoreV1().ConfigMaps(MarkerNamespace).Get(ctx, MarkerName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return &NotLabError{Name: c.Name, Reason: "it has no lab marker"}
	case err != nil:
		return fmt.Errorf("read lab marker of cluster %s (is it running? try `lab cluster status`): %w", c.Name, err)
	case cm.Data["id"] != c.ID || cm.Data["cluster"] != c.Name:
		return &NotLabError{Name: c.Name, Reason: fmt.Sprintf("its marker ID %q does not match lab's record %q", cm.Data["id"], c.ID)}
	}
	return nil
}

func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
