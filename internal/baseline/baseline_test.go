package baseline

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func snap() *Snapshot {
	return &Snapshot{
		Objects: map[string]Object{
			"ClusterRoleBinding crb":          {Kind: "ClusterRoleBinding", Name: "crb", Hash: "h1"},
			"Namespace default":               {Kind: "Namespace", Name: "default"},
			"CertificateSigningRequest csr-1": {Kind: "CertificateSigningRequest", Name: "csr-1", ExtrasOnly: true},
		},
		Nodes: map[string]Node{"w": {Labels: map[string]string{"a": "b"}, Taints: []corev1.Taint{{Key: "k", Effect: "NoSchedule"}}}},
		Files: map[string]string{"w:/etc/cni/net.d/10.conflist": "s1"},
		Units: map[string]string{"w:kubelet": "active"},
	}
}

func TestDiffCleanAndResidue(t *testing.T) {
	if d := Diff(snap(), snap()); len(d) != 0 {
		t.Fatalf("identical snapshots differ: %v", d)
	}
	live := snap()
	live.Objects["ClusterRoleBinding crb"] = Object{Kind: "ClusterRoleBinding", Name: "crb", Hash: "h2"}
	live.Objects["ClusterRoleBinding admin-for-ci"] = Object{Kind: "ClusterRoleBinding", Name: "admin-for-ci"}
	delete(live.Objects, "Namespace default")
	delete(live.Objects, "CertificateSigningRequest csr-1")
	live.Nodes["w"] = Node{Labels: map[string]string{"a": "b"}}
	live.Files["w:/etc/cni/net.d/10.conflist"] = "s2"
	live.Units["w:kubelet"] = "inactive"
	var got []string
	for _, r := range Diff(snap(), live) {
		got = append(got, r.String())
	}
	want := []string{
		"changed ClusterRoleBinding crb",
		"missing Namespace default",
		"extra ClusterRoleBinding admin-for-ci",
		"changed node w taints: k=:NoSchedule removed",
		"changed file w:/etc/cni/net.d/10.conflist",
		"changed unit w:kubelet: inactive, baseline active",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("residue:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestExtraManifestsAreTheStaticPodsTheBaselineLacks(t *testing.T) {
	base := &Snapshot{Files: map[string]string{
		"lab-worker:/etc/cni/net.d/10-kindnet.conflist":                   "a",
		"lab-control-plane:/etc/kubernetes/manifests/kube-apiserver.yaml": "b",
	}}
	live := &Snapshot{Files: map[string]string{
		"lab-worker:/etc/cni/net.d/10-kindnet.conflist":                   "a",
		"lab-worker:/etc/cni/net.d/99-extra.conflist":                     "c",
		"lab-worker:/etc/kubernetes/manifests/web.yaml":                   "d",
		"lab-control-plane:/etc/kubernetes/manifests/kube-apiserver.yaml": "changed",
		"lab-control-plane:/etc/kubernetes/manifests/kube-apiserver.bak":  "b",
	}}
	if got, want := extraManifests("lab-worker", base, live), []string{"/etc/kubernetes/manifests/web.yaml"}; !slices.Equal(got, want) {
		t.Errorf("lab-worker: %v, want %v", got, want)
	}
	if got, want := extraManifests("lab-control-plane", base, live), []string{"/etc/kubernetes/manifests/kube-apiserver.bak"}; !slices.Equal(got, want) {
		t.Errorf("lab-control-plane: %v, want %v (a changed manifest is the ledger's)", got, want)
	}
}

func TestClusterInfoSignaturesFollowTokens(t *testing.T) {
	info := func(sigs map[string]any) *unstructured.Unstructured {
		data := map[string]any{"kubeconfig": "apiVersion: v1\nkind: Config\n"}
		maps.Copy(data, sigs)
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "cluster-info", "namespace": "kube-public"}, "data": data,
		}}
	}
	base, _ := digest(info(map[string]any{"jws-kubeconfig-abcdef": "sig1"}))
	joined, _ := digest(info(map[string]any{"jws-kubeconfig-865hih": "sig2"}))
	if base != joined {
		t.Errorf("cluster-info with another token's signature differs from its baseline")
	}
	// A baseline recorded before signatures were left out compares the same once rehashed.
	raw, _ := json.Marshal(info(map[string]any{"jws-kubeconfig-abcdef": "sig1"}).Object)
	old := &Snapshot{Objects: map[string]Object{"ConfigMap kube-public/cluster-info": {Kind: "ConfigMap", Hash: "recorded-before", Content: raw}}}
	old.Rehash()
	if old.Objects["ConfigMap kube-public/cluster-info"].Hash != joined {
		t.Errorf("a rehashed old baseline still differs from the live cluster-info")
	}
	changed := info(nil)
	changed.Object["data"].(map[string]any)["kubeconfig"] = "apiVersion: v1\nkind: Config\nclusters: []\n"
	if other, _ := digest(changed); other == base {
		t.Errorf("a changed cluster-info kubeconfig is not a change")
	}
}

func TestDiffOnlyKindsTheBaselineRecorded(t *testing.T) {
	live := snap()
	live.Objects["APIService v1beta1.metrics.k8s.io"] = Object{Kind: "APIService", Name: "v1beta1.metrics.k8s.io"}
	live.Objects["CustomResourceDefinition backups.ops.example.com"] = Object{Kind: "CustomResourceDefinition", Name: "backups.ops.example.com"}
	old := snap() // recorded before lab tracked APIServices and CRDs: it lists no kinds
	if d := Diff(old, live); len(d) != 0 {
		t.Errorf("an old baseline sees residue of kinds it never recorded: %v", d)
	}
	current := snap()
	for _, k := range tracked {
		current.Kinds = append(current.Kinds, k.kind)
	}
	var got []string
	for _, r := range Diff(current, live) {
		got = append(got, r.String())
	}
	want := []string{"extra APIService v1beta1.metrics.k8s.io", "extra CustomResourceDefinition backups.ops.example.com"}
	if !slices.Equal(got, want) {
		t.Errorf("residue %v, want %v", got, want)
	}
}
