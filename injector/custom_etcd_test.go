package injector

import (
	"strings"
	"testing"
)

// kubeadmEtcd is the part of kubeadm's etcd manifest that says where the data is.
const kubeadmEtcd = `apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: kube-system
spec:
  containers:
  - command:
    - etcd
    - --data-dir=/var/lib/etcd
    - --name=lab-control-plane
    name: etcd
    volumeMounts:
    - mountPath: /var/lib/etcd
      name: etcd-data
    - mountPath: /etc/kubernetes/pki/etcd
      name: etcd-certs
  volumes:
  - hostPath:
      path: /etc/kubernetes/pki/etcd
      type: DirectoryOrCreate
    name: etcd-certs
  - hostPath:
      path: /var/lib/etcd
      type: DirectoryOrCreate
    name: etcd-data
`

// A restore is pointed at in any of the ways a learner may: the volume's host path, the flag within the
// mount, or both.
func TestEtcdHostDataDir(t *testing.T) {
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"kubeadm's", "", "", "/var/lib/etcd"},
		{"the host path", "path: /var/lib/etcd\n", "path: /var/lib/etcd-restore\n", "/var/lib/etcd-restore"},
		{"the flag within the mount", "--data-dir=/var/lib/etcd", "--data-dir=/var/lib/etcd/restored/", "/var/lib/etcd/restored"},
		{"both", "/var/lib/etcd\n", "/var/lib/etcd-from-backup\n", "/var/lib/etcd-from-backup"},
		{"a flag outside every mount", "--data-dir=/var/lib/etcd", "--data-dir=/data", ""},
		{"a mount that is only a prefix of the flag", "--data-dir=/var/lib/etcd", "--data-dir=/var/lib/etcd2", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := kubeadmEtcd
			if c.old != "" {
				m = strings.ReplaceAll(m, c.old, c.new)
			}
			if got := etcdHostDataDir([]byte(m)); got != c.want {
				t.Errorf("etcdHostDataDir = %q, want %q", got, c.want)
			}
		})
	}
	if got := etcdHostDataDir([]byte("not: [yaml")); got != "" {
		t.Errorf("etcdHostDataDir of no manifest = %q, want \"\"", got)
	}
}
