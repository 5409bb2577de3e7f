package fakecluster

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/internal/pki"
)

// Names of the fake cluster's nodes, as kind names a cluster "lab"'s.
const (
	ControlPlane = "lab-control-plane"
	Worker       = "lab-worker"
)

// Cluster is a small kind cluster in memory: a control plane and a worker, with the objects, files, units and
// kernel parameters of a fresh kind cluster that lab's faults touch.
type Cluster struct {
	*API
	ControlPlane, Worker *Node
}

// New returns a fresh fake kind cluster.
func New() (*Cluster, error) {
	c := &Cluster{API: NewAPI(objects()...), ControlPlane: NewNode(ControlPlane, "control-plane"), Worker: NewNode(Worker, "worker")}
	ca, err := pki.NewCA("kubernetes", 24*time.Hour)
	if err != nil {
		return nil, err
	}
	caKeyDER, err := x509.MarshalPKCS8PrivateKey(ca.Key)
	if err != nil {
		return nil, err
	}
	caKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: caKeyDER})
	servingCert, servingKey, err := pki.ClientCert(ca, "kube-apiserver", nil, time.Now().Add(-time.Hour), time.Now().Add(365*24*time.Hour))
	if err != nil {
		return nil, err
	}
	for _, n := range []*Node{c.ControlPlane, c.Worker} {
		n.KubeletStarted = func() {
			if err := c.RenewLease(n.name); err != nil {
				panic(fmt.Sprintf("fakecluster: renew the lease of %s: %v", n.name, err))
			}
		}
		n.WriteFile("/etc/cni/net.d/10-kindnet.conflist", `{"cniVersion":"0.3.1","name":"kindnet","plugins":[{"type":"ptp"},{"type":"portmap"}]}`, 0o644)
		n.WriteFile("/opt/cni/bin/ptp", "ptp plugin", 0o755)
		n.WriteFile("/opt/cni/bin/portmap", "portmap plugin", 0o755)
		n.WriteFile("/etc/containerd/config.toml", "[plugins.cri]\n  SystemdCgroup = true\n", 0o644)
		n.WriteFile("/etc/sysctl.d/10-network.conf", "net.ipv4.ip_forward = 1\n", 0o644)
		n.WriteFile(kindJoinConfig, "discovery:\n  bootstrapToken:\n    token: \"abcdef.0123456789abcdef\"\n", 0o644)
		n.WriteFile(pki.CACertPath, string(ca.PEM), 0o644)
		for _, p := range joined {
			n.WriteFile(p, JoinedFile(n.name, p), 0o644)
		}
		n.SetSysctl("net.ipv4.ip_forward", "1")
		n.SetSysctl("net.ipv4.conf.all.rp_filter", "0")
		n.MkdirAll("/usr/local/bin")
		n.MkdirAll("/root")
	}
	cp := c.ControlPlane
	cp.WriteFile(pki.CAKeyPath, string(caKey), 0o600)
	cp.WriteFile("/etc/kubernetes/pki/apiserver.crt", string(servingCert), 0o644)
	cp.WriteFile("/etc/kubernetes/pki/apiserver.key", string(servingKey), 0o600)
	for _, component := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		cp.WriteFile("/etc/kubernetes/manifests/"+component+".yaml", staticPod(component, "--bind-address=127.0.0.1"), 0o600)
	}
	cp.WriteFile("/etc/kubernetes/manifests/etcd.yaml", etcdManifest, 0o600)
	cp.WriteFile("/var/lib/etcd/member/snap/db", "etcd data /registry/namespaces/kube-system", 0o600)
	for _, n := range []*Node{c.ControlPlane, c.Worker} {
		if err := c.RenewLease(n.name); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func staticPod(component, flag string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: kube-system\n  labels: {component: %s}\nspec:\n  containers:\n  - name: %s\n    command: [%s, %s]\n", component, component, component, component, flag)
}

const etcdManifest = `apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: kube-system
  labels: {component: etcd}
spec:
  containers:
  - name: etcd
    command: [etcd, --data-dir=/var/lib/etcd]
    volumeMounts: [{name: etcd-data, mountPath: /var/lib/etcd}]
  volumes:
  - name: etcd-data
    hostPath: {path: /var/lib/etcd, type: DirectoryOrCreate}
`

// objects are a fresh kind cluster's objects that faults touch, and a team's application in namespace shop.
func objects() []runtime.Object {
	node := func(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		l := map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
		maps.Copy(l, labels)
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
			Spec:       corev1.NodeSpec{Taints: taints},
			Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		}
	}
	ns := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	}
	two := int32(2)
	web := map[string]string{"app": "web"}
	kindnet := map[string]string{"app": "kindnet"}
	return []runtime.Object{
		node(ControlPlane, map[string]string{"node-role.kubernetes.io/control-plane": ""},
			corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}),
		node(Worker, nil),
		ns("default", nil), ns("kube-system", nil), ns("kube-public", nil), ns(corev1.NamespaceNodeLease, nil),
		ns("local-path-storage", nil), ns("shop", map[string]string{"team": "shop"}),
		&appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "kindnet", Namespace: "kube-system"},
			Spec: appsv1.DaemonSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: kindnet},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: kindnet},
					Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "kindnet-cni", Image: "docker.io/kindest/kindnetd:v20250512"}},
						Volumes:    []corev1.Volume{{Name: "cni-cfg", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc/cni/net.d"}}}},
					},
				},
			},
			Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 2, CurrentNumberScheduled: 2, UpdatedNumberScheduled: 2, NumberReady: 2, NumberAvailable: 2},
		},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: "kube-system"},
			Type:       corev1.SecretTypeBootstrapToken,
			Data:       map[string][]byte{"token-id": []byte("abcdef"), "token-secret": []byte("0123456789abcdef")},
		},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: "kube-system"}, Data: map[string]string{"config.conf": "mode: iptables\n"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config", Namespace: "shop"}, Data: map[string]string{"app.conf": "port=8080\n"}},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Labels: web},
			Spec: appsv1.DeploymentSpec{
				Replicas: &two,
				Selector: &metav1.LabelSelector{MatchLabels: web},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: web},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
				},
			},
			Status: appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2},
		},
		&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
			Spec:       corev1.ServiceSpec{Selector: web, Ports: []corev1.ServicePort{{Port: 80}}},
		},
	}
}

// Nodes lists the cluster's nodes, as kind's provider does.
func (c *Cluster) Nodes() ([]nodes.Node, error) { return []nodes.Node{c.ControlPlane, c.Worker}, nil }

// Snapshot is the whole cluster at one moment: its API objects and what each node holds.
type Snapshot struct {
	Objects map[string]string
	Nodes   map[string]State
}

// Snapshot records the cluster as it is now.
func (c *Cluster) Snapshot() (*Snapshot, error) {
	objs, err := c.Objects()
	if err != nil {
		return nil, err
	}
	return &Snapshot{Objects: objs, Nodes: map[string]State{ControlPlane: c.ControlPlane.State(), Worker: c.Worker.State()}}, nil
}

// Diff says how the cluster moved from s to o, one line per object or node; none when nothing differs.
func (s *Snapshot) Diff(o *Snapshot) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(s.Objects)) {
		switch got, ok := o.Objects[k]; {
		case !ok:
			out = append(out, "gone: "+k)
		case got != s.Objects[k]:
			out = append(out, fmt.Sprintf("changed: %s\n  was %s\n  now %s", k, s.Objects[k], got))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(o.Objects)) {
		if _, ok := s.Objects[k]; !ok {
			out = append(out, "added: "+k)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Nodes)) {
		if d := s.Nodes[name].Equal(o.Nodes[name]); d != "" {
			out = append(out, "node "+name+": "+strings.TrimSuffix(d, "; "))
		}
	}
	return out
}
