package class

import (
	"fmt"
	"maps"
	"net/url"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig is a learner's kubeconfig for a shared cluster: its API server, the CA that signs it, a bearer
// token and the learner's namespace as the context's default, and nothing else that could run or read
// anything on the learner's machine.
func Kubeconfig(server string, ca []byte, namespace, learner, token string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["shared"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[learner] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[namespace] = &clientcmdapi.Context{Cluster: "shared", AuthInfo: learner, Namespace: namespace}
	cfg.CurrentContext = namespace
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("write kubeconfig for %s: %w", learner, err)
	}
	return b, nil
}

// safeWorkspace rebuilds the workspace a server sent from the four things a learner needs of it: the API
// server's https address, its CA, the token and the namespace. Anything else a kubeconfig can carry is
// dropped, and a kubeconfig with a credential plugin (exec) or an auth provider is refused outright: kubectl
// would run or trust it on the learner's machine, and a class server has no business sending one.
func safeWorkspace(ws *Workspace, learner string) (*Workspace, error) {
	if ws == nil {
		return nil, nil
	}
	refuse := fmt.Errorf
	cfg, err := clientcmd.Load([]byte(ws.Kubeconfig))
	if err != nil {
		return nil, refuse("its kubeconfig does not parse (%v)", err)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.AuthInfos)) {
		switch a := cfg.AuthInfos[name]; {
		case a.Exec != nil:
			return nil, refuse("user %q runs a command (exec %q)", name, a.Exec.Command)
		case a.AuthProvider != nil:
			return nil, refuse("user %q has an auth provider (%s)", name, a.AuthProvider.Name)
		}
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || cfg.Clusters[ctx.Cluster] == nil || cfg.AuthInfos[ctx.AuthInfo] == nil {
		return nil, refuse("its kubeconfig's current context %q names no cluster and user", cfg.CurrentContext)
	}
	cluster, user := cfg.Clusters[ctx.Cluster], cfg.AuthInfos[ctx.AuthInfo]
	if u, err := url.Parse(cluster.Server); err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return nil, refuse("the API server %q is not an https address", cluster.Server)
	}
	if user.Token == "" {
		return nil, refuse("its kubeconfig carries no token")
	}
	if ws.Namespace == "" || ctx.Namespace != ws.Namespace || len(validation.IsDNS1123Label(ws.Namespace)) > 0 {
		return nil, refuse("the namespace %q is not the kubeconfig's %q, or not a namespace name", ws.Namespace, ctx.Namespace)
	}
	kc, err := Kubeconfig(cluster.Server, cluster.CertificateAuthorityData, ws.Namespace, learner, user.Token)
	if err != nil {
		return nil, err
	}
	return &Workspace{Namespace: ws.Namespace, Kubeconfig: string(kc)}, nil
}
