package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/cka-lab/lab/internal/cluster/hostenv"
	"github.com/cka-lab/lab/internal/cluster/images"
	"github.com/cka-lab/lab/internal/kube"
	"github.com/cka-lab/lab/internal/state"
	"github.com/cka-lab/lab/kindconfigs"
)

// CreateOptions say what cluster to create.
type CreateOptions struct {
	Workers         int
	NodeImage       string
	Images          []string
	MergeKubeconfig bool
	Wait            time.Duration
}

// CreateOption sets a CreateOptions field.
type CreateOption func(*CreateOptions)

// CreateWithWorkers sets the number of worker nodes.
func CreateWithWorkers(n int) CreateOption { return func(o *CreateOptions) { o.Workers = n } }

// CreateWithNodeImage sets the kind node image.
func CreateWithNodeImage(img string) CreateOption {
	return func(o *CreateOptions) {
		if img != "" {
			o.NodeImage = img
		}
	}
}

// CreateWithImages sets the workload images to preload into every node.
func CreateWithImages(refs []string) CreateOption { return func(o *CreateOptions) { o.Images = refs } }

// CreateWithMergeKubeconfig also writes the cluster into the user's kubeconfig.
func CreateWithMergeKubeconfig(m bool) CreateOption {
	return func(o *CreateOptions) { o.MergeKubeconfig = m }
}

// CreateWithWait bounds the wait for nodes and system Pods.
func CreateWithWait(d time.Duration) CreateOption { return func(o *CreateOptions) { o.Wait = d } }

// NodeImage is the image lab uses when none is given: $LAB_NODE_IMAGE, else DefaultNodeImage.
func NodeImage() string {
	if img := os.Getenv("LAB_NODE_IMAGE"); img != "" {
		return img
	}
	return DefaultNodeImage
}

// KubernetesVersion is the Kubernetes release a kind node image runs, read from its tag (kindest/node:v1.35.4,
// with or without a digest); "" for an image whose tag does not name one.
func KubernetesVersion(image string) string {
	image, _, _ = strings.Cut(image, "@")
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return ""
	}
	tag := image[i+1:]
	if !kubeTag.MatchString(tag) {
		return ""
	}
	return tag
}

var kubeTag = regexp.MustCompile(`^v\d+\.\d+\.\d+`)

// Create makes a lab cluster, or reuses the lab cluster of that name (reused is then true). It refuses a kind
// cluster of that name that lab did not create. Every step prints one status line.
func (p *Provider) Create(ctx context.Context, name string, opts ...CreateOption) (c *Cluster, reused bool, err error) {
	o := CreateOptions{Workers: 1, NodeImage: NodeImage(), Wait: 5 * time.Minute}
	for _, f := range opts {
		f(&o)
	}
	if _, err := kindconfigs.Render(kindconfigs.Options{Workers: o.Workers}); err != nil {
		return nil, false, err
	}
	var docker hostenv.Docker
	if err := p.status.Step("Checking Docker", func() (err error) {
		docker, err = hostenv.CheckDocker(ctx)
		return err
	}); err != nil {
		return nil, false, err
	}
	exists, err := p.Exists(ctx, name)
	if err != nil {
		return nil, false, err
	}
	if exists {
		c, err := p.reuse(ctx, name, o)
		if !errors.Is(err, errHalfMade) {
			return c, err == nil, err
		}
		p.status.Info("Cluster %s was left half-made by an interrupted create; recreating it", name)
		if err := p.kind.Delete(name, ""); err != nil {
			return nil, false, fmt.Errorf("delete half-made cluster %s: %w", name, err)
		}
	}
	c, err = p.create(ctx, name, docker, o)
	return c, false, err
}

var errHalfMade = errors.New("cluster was left half-made")

func (p *Provider) reuse(ctx context.Context, name string, o CreateOptions) (*Cluster, error) {
	var rec Record
	if err := p.store.Read(name, recordFile, &rec); err == nil && rec.Phase == PhaseCreating {
		return nil, errHalfMade
	}
	// A cgroup left frozen keeps its Pod from ever stopping: recovering the cluster starts by thawing it.
	if thawed := p.thawBefore(ctx, name, "reusing"); len(thawed) > 0 {
		settleThawed(ctx, thawed)
	}
	if stopped, err := stoppedNodes(ctx, name); err != nil {
		return nil, err
	} else if len(stopped) > 0 && rec.Phase == PhaseReady {
		if err := p.status.Step("Starting stopped node containers", func() error { return startNodes(ctx, stopped) }); err != nil {
			return nil, err
		}
	}
	var c *Cluster
	if err := p.status.Step(fmt.Sprintf("Reusing lab cluster %q", name), func() error {
		// The API server of a node that was just started needs a moment before it answers.
		return kube.Poll(ctx, time.Second, o.Wait, func(ctx context.Context) (bool, error) {
			var err error
			c, err = p.Get(ctx, name)
			if errors.Is(err, ErrNotLab) || errors.Is(err, ErrNoCluster) {
				return false, err
			}
			return err == nil, nil
		})
	}); err != nil {
		if c == nil {
			_, err = p.Get(ctx, name)
		}
		return nil, err
	}
	if err := p.finish(ctx, c, o, false); err != nil {
		return nil, err
	}
	return c, nil
}

func (p *Provider) create(ctx context.Context, name string, docker hostenv.Docker, o CreateOptions) (*Cluster, error) {
	if err := p.status.Step("Checking free memory, disk and inotify instances", func() error {
		running, err := p.kindNodes()
		if err != nil {
			return err
		}
		return preflight(hostenv.AvailableMemory(), hostenv.FreeDisk(docker), docker.DockerRootDir,
			hostenv.InotifyInstances(), running, o.Workers)
	}); err != nil {
		return nil, err
	}
	if err := p.status.Step(fmt.Sprintf("Ensuring node image (%s)", o.NodeImage), func() error {
		return images.EnsureLocal(ctx, o.NodeImage)
	}); err != nil {
		return nil, err
	}
	if err := p.status.Step(fmt.Sprintf("Ensuring workload images (%d)", len(o.Images)), func() error {
		return images.EnsureAllLocal(ctx, o.Images)
	}); err != nil {
		return nil, err
	}
	var host hostenv.Conditions
	if err := p.status.Step("Probing host (cgroup version, oom_score_adj)", func() (err error) {
		host, err = hostenv.Probe(ctx, docker, o.NodeImage)
		return err
	}); err != nil {
		return nil, err
	}
	auditDir, err := filepath.Abs(p.store.Path(name, "audit"))
	if err != nil {
		return nil, fmt.Errorf("audit policy directory: %w", err)
	}
	cfg, err := kindconfigs.Render(kindconfigs.Options{Workers: o.Workers, CgroupV1: host.CgroupV1, NoSysResource: host.NoSysResource,
		AuditDir: auditDir})
	if err != nil {
		return nil, err
	}
	rec := Record{
		Name: name, ID: newID(), Phase: PhaseCreating, NodeImage: o.NodeImage, Workers: o.Workers,
		Created: time.Now().UTC(), Kubeconfig: p.store.Path(name, "kubeconfig"), Host: host,
	}
	// A same-named cluster removed behind lab's back (docker rm) left its state; none of it describes this one.
	if err := p.store.ClearCluster(name); err != nil {
		return nil, fmt.Errorf("clear stale state of %s: %w", name, err)
	}
	// The record comes first: a create interrupted from here on leaves a cluster lab knows it may replace.
	if err := p.store.Write(name, recordFile, rec); err != nil {
		return nil, err
	}
	if err := WriteAuditPolicy(auditDir); err != nil {
		return nil, err
	}
	_ = os.Remove(rec.Kubeconfig)
	if err := os.MkdirAll(filepath.Dir(rec.Kubeconfig), 0o700); err != nil {
		return nil, err
	}
	p.status.Info("Creating kind cluster %q (%d node(s), image %s) ...", name, o.Workers+1, o.NodeImage)
	if err := p.kind.Create(name,
		kindcluster.CreateWithV1Alpha4Config(cfg),
		kindcluster.CreateWithNodeImage(o.NodeImage),
		// No kind wait: lab waits for nodes and system Pods itself, while it loads the images (finish).
		kindcluster.CreateWithWaitForReady(0),
		kindcluster.CreateWithKubeconfigPath(rec.Kubeconfig),
		kindcluster.CreateWithDisplayUsage(false),
		kindcluster.CreateWithDisplaySalutation(false),
	); err != nil {
		_ = p.store.RemoveCluster(name)
		return nil, fmt.Errorf("create kind cluster %s: %w", name, err)
	}
	_ = os.Chmod(rec.Kubeconfig, 0o600)
	c, err := p.connect(rec)
	if err != nil {
		return nil, err
	}
	if err := p.status.Step("Marking the cluster as lab's", func() error { return c.mark(ctx) }); err != nil {
		return nil, err
	}
	if err := p.finish(ctx, c, o, true); err != nil {
		return nil, err
	}
	c.Phase = PhaseReady
	if err := p.store.Write(name, recordFile, c.Record); err != nil {
		return nil, err
	}
	return c, nil
}

// preflight refuses a cluster of the given workers this machine cannot hold, before an image is pulled or a
// node started: each shortfall is one line that says what the cluster needs and what is free (a value < 0 is
// unknown and passes).
func preflight(freeMemory, freeDisk int64, dockerRoot string, inotifyInstances, runningNodes, workers int) error {
	return errors.Join(
		hostenv.CheckMemory(freeMemory, workers),
		hostenv.CheckDisk(freeDisk, dockerRoot, workers),
		hostenv.CheckInotify(inotifyInstances, runningNodes, workers+1),
	)
}

// finish brings a new (cold) or reused cluster to where scenarios can run: images in every node, system Pods
// ready. Only a cold cluster's system Pods are retried: a reused one's belong to whatever runs on it.
func (p *Provider) finish(ctx context.Context, c *Cluster, o CreateOptions, cold bool) error {
	ns, err := c.Nodes()
	if err != nil {
		return err
	}
	// Loading images is docker and disk work, waiting for the control plane is the cluster's own: done side by
	// side, a cold create takes the longer of the two instead of their sum.
	step := fmt.Sprintf("Loading %d image(s) into %d node(s) while nodes and system Pods come up", len(o.Images), len(ns))
	if err := p.status.Step(step, func() error {
		g, gctx := errgroup.WithContext(ctx)
		retryCtx, stopRetries := context.WithCancel(gctx)
		g.Go(func() error { return images.LoadIntoNodes(gctx, ns, o.Images) })
		if cold {
			g.Go(func() error { c.retrySandboxes(retryCtx, o.Wait); return nil })
		}
		g.Go(func() error { defer stopRetries(); return c.WaitReady(gctx, o.Wait) })
		return g.Wait()
	}); err != nil {
		return err
	}
	if err := rejectUnrouted(ctx, ns); err != nil {
		return err
	}
	if o.MergeKubeconfig {
		if err := p.kind.ExportKubeConfig(c.Name, "", false); err != nil {
			return fmt.Errorf("merge kubeconfig: %w", err)
		}
		p.status.Info("Merged context kind-%s into your kubeconfig", c.Name)
	}
	return nil
}

func (c *Cluster) mark(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	labels := map[string]string{"app.kubernetes.io/managed-by": "lab"}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: MarkerNamespace, Labels: labels}}
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", MarkerNamespace, err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: MarkerName, Namespace: MarkerNamespace, Labels: labels},
		Data: map[string]string{
			"id": c.ID, "cluster": c.Name, "created": c.Created.Format(time.RFC3339), "nodeImage": c.NodeImage,
		},
	}
	if _, err := c.Kube.CoreV1().ConfigMaps(MarkerNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create marker %s/%s: %w", MarkerNamespace, MarkerName, err)
	}
	return nil
}

// systemNamespaces hold the Pods a cluster needs before any scenario runs (DNS, CNI, storage provisioner).
var systemNamespaces = []string{"kube-system", "local-path-storage"}

// WaitReady waits until every node is Ready and every system Pod is Running with its containers ready. It looks
// again whenever a node or a system Pod, Deployment or DaemonSet changes (the controllers' ready counts follow
// their Pods' by a moment), so the wait ends with the change that completes it.
func (c *Cluster) WaitReady(ctx context.Context, timeout time.Duration) error {
	watches := []kube.Watcher{
		func(ctx context.Context) (watch.Interface, error) {
			return c.Kube.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})
		},
	}
	for _, ns := range systemNamespaces {
		watches = append(watches,
			func(ctx context.Context) (watch.Interface, error) {
				return c.Kube.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
			},
			func(ctx context.Context) (watch.Interface, error) {
				return c.Kube.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{})
			},
			func(ctx context.Context) (watch.Interface, error) {
				return c.Kube.AppsV1().DaemonSets(ns).Watch(ctx, metav1.ListOptions{})
			})
	}
	var last string
	err := kube.WaitFor(ctx, time.Second, timeout, watches, func(ctx context.Context) (bool, error) {
		nl, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, n := range nl.Items {
			if !NodeReady(&n) {
				last = "node " + n.Name + " is not Ready"
				return false, nil
			}
		}
		for _, ns := range systemNamespaces {
			// Right after kubeadm a workload may have no Pods yet: its controller's counts say what is missing.
			if why, err := c.workloadsReady(ctx, ns); err != nil || why != "" {
				last = why
				if err != nil {
					last = err.Error()
				}
				return false, nil
			}
			pl, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			for _, pod := range pl.Items {
				if !PodReady(&pod) {
					last = fmt.Sprintf("pod %s/%s is %s", ns, pod.Name, pod.Status.Phase)
					return false, nil
				}
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("cluster %s not ready after %s (%s): %w", c.Name, timeout, last, err)
	}
	return nil
}

// workloadsReady says which Deployment or DaemonSet in ns is not fully ready yet, "" when none.
func (c *Cluster) workloadsReady(ctx context.Context, ns string) (string, error) {
	dl, err := c.Kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, d := range dl.Items {
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		if d.Status.ObservedGeneration < d.Generation || d.Status.ReadyReplicas < want {
			return fmt.Sprintf("deployment %s/%s has %d/%d ready", ns, d.Name, d.Status.ReadyReplicas, want), nil
		}
	}
	dsl, err := c.Kube.AppsV1().DaemonSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, d := range dsl.Items {
		if d.Status.ObservedGeneration < d.Generation || d.Status.NumberReady < d.Status.DesiredNumberScheduled {
			return fmt.Sprintf("daemonset %s/%s has %d/%d ready", ns, d.Name, d.Status.NumberReady, d.Status.DesiredNumberScheduled), nil
		}
	}
	return "", nil
}

// NodeReady reports the node's Ready condition.
func NodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// PodReady reports a Running Pod whose Ready condition is true (a completed Pod counts as ready: it did its job).
func PodReady(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodSucceeded {
		return true
	}
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// WriteAuditPolicy writes the API server's audit policy into dir, the host directory the control-plane node
// mounts for it (kindconfigs.Options.AuditDir).
func WriteAuditPolicy(dir string) error {
	if err := state.WriteFile(filepath.Join(dir, kindconfigs.AuditPolicyFile), kindconfigs.AuditPolicy); err != nil {
		return fmt.Errorf("write audit policy: %w", err)
	}
	return nil
}
