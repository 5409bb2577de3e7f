package baseline

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
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
		"changed node w taints: [], baseline [k=:NoSchedule]",
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
