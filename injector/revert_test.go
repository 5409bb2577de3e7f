package injector_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/injector"
	"github.com/cka-lab/lab/internal/fakecluster"
	"github.com/cka-lab/lab/scenarios"
)

// revertCase is one scenario's faults, as scenario YAML writes them, injected into a fresh fake cluster.
type revertCase struct {
	name   string
	faults string
	// tools names the programs of this machine the faults copy onto nodes or pack into images ($LAB_HELM...).
	tools []string
}

// revertCases inject every fault kind, every operation of the kinds that have several, and every custom fault
// that can run against fakes. Faults that need a namespace of their own (a helm release, a TLS Secret, an
// operator) come after the apply that creates it, as in a scenario.
var revertCases = []revertCase{
	{name: "apply", faults: `
- apply:
    ready: true
    manifest: |
      apiVersion: v1
      kind: Namespace
      metadata: {name: tenant}
      ---
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: api, namespace: tenant}
      spec:
        selector: {matchLabels: {app: api}}
        template:
          metadata: {labels: {app: api}}
          spec: {containers: [{name: api, image: nginx:1.27}]}
      ---
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: web-config, namespace: shop}
      data: {app.conf: "port=8081\n"}
      ---
      apiVersion: v1
      kind: ResourceQuota
      metadata: {name: pods, namespace: shop}
      spec: {hard: {pods: "1"}}
`},
	{name: "patch", faults: `
- patch: {object: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}, type: strategic,
    patch: '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:does-not-exist"}]}}}}'}
- patch: {object: {apiVersion: v1, kind: Service, namespace: shop, name: web}, type: merge, patch: '{"spec":{"selector":{"app":"webb"}}}'}
- patch: {object: {apiVersion: v1, kind: ConfigMap, namespace: shop, name: web-config}, type: json,
    patch: '[{"op":"replace","path":"/data/app.conf","value":"port=1\n"}]'}
`},
	{name: "delete", faults: `
- delete: {apiVersion: v1, kind: ConfigMap, namespace: shop, name: web-config}
- delete: {apiVersion: v1, kind: Service, namespace: shop, name: web}
`},
	{name: "scale", faults: `
- scale: {object: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}, replicas: 0}
`},
	{name: "taint", faults: `
- taint: {node: lab-worker, key: dedicated, value: gpu, effect: NoSchedule}
- taint: {node: lab-control-plane, key: node-role.kubernetes.io/control-plane, effect: NoExecute}
`},
	{name: "label", faults: `
- label: {node: lab-worker, set: {disk: ssd}, remove: [kubernetes.io/os]}
`},
	{name: "cordon", faults: `
- cordon: {node: lab-worker}
`},
	{name: "nodeFile", faults: `
- nodeFile: {node: lab-worker, path: /etc/cni/net.d/10-kindnet.conflist, replace: {old: ptp, new: ptpp}}
- nodeFile: {node: lab-worker, path: /etc/app/conf.d/app.conf, write: "port=1\n"}
- nodeFile: {node: lab-worker, path: /opt/cni/bin/portmap, remove: true}
- nodeFile: {node: lab-worker, path: /opt/cni/bin/ptp, moveTo: /root/ptp}
- nodeFile: {node: lab-control-plane, path: /etc/sysctl.d/99-lab.conf, write: "net.ipv4.ip_forward = 0\n", wholeDir: true}
`},
	{name: "nodeFile chmod of a new file", faults: `
- nodeFile: {node: lab-worker, path: /etc/app/run.sh, write: "#!/bin/sh\n"}
- nodeFile: {node: lab-worker, path: /etc/app/run.sh, chmod: "0755"}
`},
	// The ledger's digest of a file covers its mode, so a chmod alone is undone too.
	{name: "nodeFile chmod of a file that existed", faults: `
- nodeFile: {node: lab-worker, path: /etc/cni/net.d/10-kindnet.conflist, chmod: "0600"}
`},
	{name: "nodeService", faults: `
- nodeService: {node: lab-worker, unit: kubelet}
`},
	{name: "webhook", faults: `
- webhook: {name: resource-policy, namespace: policy-system, policy: require-limits, namespaceSelector: {team: shop}}
- webhook: {name: log-injector, namespace: inject-system, policy: "inject-sidecar:busybox:1.36", mutating: true, resources: [pods]}
- webhook: {name: down, namespace: down-system, policy: require-limits, replicas: 0}
`},
	{name: "custom userKubeconfig", faults: `
- custom: {func: userKubeconfig, args: {node: lab-control-plane, path: /home/alice/.kube/config, user: alice, group: dev, cluster: lab, namespace: shop, fault: server, badPort: "6444"}}
- custom: {func: userKubeconfig, args: {node: lab-control-plane, path: /root/.kube/config, user: bob, cluster: lab, fault: foreignCA}}
`},
	{name: "custom certificateExpiresSoon", faults: `
- custom: {func: certificateExpiresSoon, args: {node: lab-control-plane, name: apiserver, days: "10"}}
`},
	{name: "custom staticPodManifest", faults: `
- custom: {func: staticPodManifest, args: {node: lab-control-plane, component: kube-scheduler, old: 127.0.0.1, new: 127.0.0.2, wait: running}}
- custom: {func: staticPodManifest, args: {node: lab-control-plane, component: kube-apiserver, old: 127.0.0.1, new: 127.0.0.9}}
`},
	{name: "custom installFromComponent", faults: `
- custom: {func: installFromComponent, args: {node: lab-control-plane, process: etcd, path: /usr/local/bin/etcdctl}}
`},
	{name: "custom editAndRestart", faults: `
- custom: {func: editAndRestart, args: {node: lab-worker, unit: containerd, path: /etc/containerd/config.toml, old: SystemdCgroup = true, new: SystemdCgroup = false}}
`},
	{name: "custom breakConfigMap", faults: `
- custom: {func: breakConfigMap, args: {namespace: shop, configmap: web-config, key: app.conf, old: "8080", new: "9090", workload: deployment/web}}
`},
	{name: "custom excludeFromCNIDaemonSet", faults: `
- custom: {func: excludeFromCNIDaemonSet, args: {node: lab-worker}}
`},
	{name: "custom sysctl", faults: `
- custom: {func: sysctl, args: {node: lab-worker, key: net.ipv4.ip_forward, value: "0"}}
`},
	{name: "custom leaveCluster", faults: `
- custom: {func: leaveCluster, args: {node: lab-worker, controlPlane: lab-control-plane}}
`},
	{name: "custom installEtcdutl and etcdSnapshot", tools: []string{"LAB_ETCDUTL"}, faults: `
- custom: {func: installEtcdutl, args: {node: lab-control-plane}}
- custom: {func: etcdSnapshot, args: {node: lab-control-plane, path: /root/backup/etcd-snapshot.db}}
`},
	{name: "custom installHelm and helm", tools: []string{"LAB_HELM"}, faults: `
- apply: {manifest: "apiVersion: v1\nkind: Namespace\nmetadata: {name: charts}\n"}
- custom: {func: installHelm, args: {node: lab-control-plane}}
- custom: {func: helm, args: {node: lab-control-plane, namespace: charts, args: install web /root/charts/web}}
`},
	{name: "custom installMetricsServer", tools: []string{"LAB_METRICS_SERVER"}, faults: `
- custom: {func: installMetricsServer, args: {}}
`},
	{name: "custom installGatewayController and tlsSecret", tools: []string{"LAB_TRAEFIK"}, faults: `
- apply: {manifest: "apiVersion: v1\nkind: Namespace\nmetadata: {name: site}\n"}
- custom: {func: installGatewayController, args: {}}
- custom: {func: tlsSecret, args: {namespace: site, name: site-tls, host: site.example.com}}
`},
	{name: "custom operator", faults: `
- apply: {manifest: "apiVersion: v1\nkind: Namespace\nmetadata: {name: widgets}\n"}
- custom: {func: operator, args: {namespace: widgets, name: widget-operator, resource: widgets.v1.example.com}}
`},
}

// Inject then Revert of each case must leave the cluster exactly as it was: every API object (what the API
// server and controllers write aside), every file and mode on every node, every unit's state and kernel
// parameter. Each case must change something first, or it would prove nothing.
func TestRevertRestoresExactly(t *testing.T) {
	for _, tc := range revertCases {
		t.Run(tc.name, func(t *testing.T) {
			c, inj, _ := newInjector(t, tc.tools)
			before, err := c.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for _, f := range decodeFaults(t, tc.faults) {
				if err := inj.Inject(ctx, f); err != nil {
					t.Fatalf("Inject: %v", err)
				}
			}
			broken, err := c.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if len(before.Diff(broken)) == 0 {
				t.Fatal("the faults changed nothing in the cluster")
			}
			if err := inj.Revert(ctx); err != nil {
				t.Fatalf("Revert: %v", err)
			}
			if !inj.Ledger().Empty() {
				t.Errorf("the ledger still holds %d entries after Revert", len(inj.Ledger().Entries))
			}
			assertRestored(t, c, before)
		})
	}
}

// A revert is resumable from the ledger on disk: another process (a later `lab reset`) reading it restores the
// same, after the learner changed what the fault had touched.
func TestRevertFromAnotherProcessUndoesTheLearnersChanges(t *testing.T) {
	c, inj, ledgerFile := newInjector(t, nil)
	before, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, f := range decodeFaults(t, `
- taint: {node: lab-worker, key: dedicated, value: gpu, effect: NoSchedule}
- nodeFile: {node: lab-worker, path: /etc/containerd/config.toml, replace: {old: "true", new: "false"}}
- delete: {apiVersion: v1, kind: ConfigMap, namespace: shop, name: web-config}
`) {
		if err := inj.Inject(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	// The learner's fix goes too far: another label, the file rewritten, the ConfigMap recreated differently.
	nodes := c.Typed.CoreV1().Nodes()
	n, err := nodes.Get(ctx, fakecluster.Worker, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels["fixed"] = "yes"
	n.Spec.Taints = nil
	if _, err := nodes.Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Worker.WriteFile("/etc/containerd/config.toml", "rewritten by hand\n", 0o600)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config", Namespace: "shop"}, Data: map[string]string{"other": "1"}}
	if _, err := c.Typed.CoreV1().ConfigMaps("shop").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ledger, err := injector.OpenLedger(ledgerFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := injector.New(injector.Env{Clients: c.Clients, Nodes: c.Nodes}, ledger).Revert(ctx); err != nil {
		t.Fatal(err)
	}
	assertRestored(t, c, before)
}

// backupDir is where the injector keeps the originals of node files; it stays on the node, empty, after a
// revert, as a place a learner restoring by hand would look.
const backupDir = "/var/lib/lab-backup"

// assertRestored fails the test unless the cluster is as before, but for the injector's empty backup
// directory on the nodes.
func assertRestored(t *testing.T, c *fakecluster.Cluster, before *fakecluster.Snapshot) {
	t.Helper()
	after, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range after.Nodes {
		if _, ok := before.Nodes[name].Files[backupDir]; ok {
			continue
		}
		for p := range n.Files {
			if strings.HasPrefix(p, backupDir+"/") {
				t.Errorf("Revert left the backup %s on %s", p, name)
			}
		}
		delete(n.Files, backupDir)
	}
	if diff := before.Diff(after); len(diff) > 0 {
		t.Errorf("Revert left the cluster changed:\n%s", strings.Join(diff, "\n"))
	}
}

// Every fault kind of the scenario format, and every custom fault the injector registers, must have a case
// above or a reason below why fakes cannot run it: a kind added without one would be proven only by e2e.
func TestEveryFaultKindHasARevertCase(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range revertCases {
		for _, f := range decodeFaults(t, tc.faults) {
			kind, _ := f.Kind()
			covered[kind] = true
			if f.Custom != nil {
				covered["custom "+f.Custom.Func] = true
			}
		}
	}
	typ := reflect.TypeOf(scenarios.Fault{})
	for i := range typ.NumField() {
		tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("yaml"), ",")
		if tag != "" && !covered[tag] {
			t.Errorf("fault kind %s has no case in revertCases", tag)
		}
	}
	for _, name := range registeredCustomFaults(t) {
		if !covered["custom "+name] {
			t.Errorf("custom fault %s has no case in revertCases", name)
		}
	}
}

// registeredCustomFaults reads the names the injector's sources register: Registered answers for one name,
// and a custom fault registered but used by no scenario yet needs a case all the same.
func registeredCustomFaults(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`\bRegister\("([A-Za-z]+)"`)
	var names []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			if !injector.Registered(m[1]) {
				t.Errorf("%s registers %s, which injector.Registered does not know", f, m[1])
			}
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		t.Fatal("found no custom fault registered in the injector's sources")
	}
	slices.Sort(names)
	return names
}

func decodeFaults(t *testing.T, src string) []scenarios.Fault {
	t.Helper()
	var faults []scenarios.Fault
	if err := yaml.Unmarshal([]byte(src), &faults); err != nil {
		t.Fatalf("decode faults: %v\n%s", err, src)
	}
	return faults
}

// newInjector returns a fresh fake cluster and an injector on it with its ledger's file in a temporary
// directory; each of tools names a program of this machine, given as a small file.
func newInjector(t *testing.T, tools []string) (*fakecluster.Cluster, *injector.Injector, string) {
	t.Helper()
	c, err := fakecluster.New()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	self := filepath.Join(dir, "lab")
	if err := os.WriteFile(self, []byte("lab binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, env := range tools {
		p := filepath.Join(dir, strings.ToLower(env))
		if err := os.WriteFile(p, []byte(env+" binary"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv(env, p)
	}
	c.ControlPlane.Helm = func(args []string) error {
		// A release is a Secret in its namespace, as Helm keeps it.
		return c.Clients.ApplyManifest(context.Background(), []byte(releaseSecret(args)))
	}
	file := filepath.Join(dir, "ledger.json")
	ledger, err := injector.OpenLedger(file)
	if err != nil {
		t.Fatal(err)
	}
	env := injector.Env{Clients: c.Clients, Nodes: c.Nodes, Self: self, SecretsDir: filepath.Join(dir, "secrets")}
	return c, injector.New(env, ledger), file
}

// releaseSecret is the Secret `helm install NAME CHART --namespace NS ...` keeps its release in.
func releaseSecret(args []string) string {
	name, ns := args[1], ""
	for i, a := range args {
		if a == "--namespace" && i+1 < len(args) {
			ns = args[i+1]
		}
	}
	return "apiVersion: v1\nkind: Secret\nmetadata: {name: sh.helm.release.v1." + name + ".v1, namespace: " + ns + ", labels: {owner: helm}}\ntype: helm.sh/release.v1\n"
}
