package cluster

import (
	"fmt"

	"github.com/cka-lab/lab/internal/kube"
)

// Attach returns a cluster lab did not create and may change only one namespace of: a learner's namespace on
// a workshop's shared cluster, reached with the kubeconfig the class server issued. It has no marker to verify
// and no nodes lab can reach; RBAC on the cluster keeps the credentials inside the namespace.
func Attach(name, kubeconfig, namespace string) (*Cluster, error) {
	if namespace == "" {
		return nil, fmt.Errorf("attach %s: a shared cluster needs the namespace lab may change", name)
	}
	clients, err := kube.FromKubeconfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	return &Cluster{Record: Record{Name: name, Phase: PhaseReady, Kubeconfig: kubeconfig}, Clients: clients, Namespace: namespace}, nil
}

// Shared reports a cluster lab reaches through one namespace only.
func (c *Cluster) Shared() bool { return c.Namespace != "" }
