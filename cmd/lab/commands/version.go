package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/tools"
	"github.com/cka-lab/lab/internal/version"
)

// versionOutput is `lab version -o json`, named as kubectl's version output is.
type versionOutput struct {
	LabVersion        version.Info      `json:"labVersion"`
	NodeImage         string            `json:"nodeImage"`
	KubernetesVersion string            `json:"kubernetesVersion,omitempty"`
	Components        map[string]string `json:"components"`
}

type versionOptions struct{ out outputFlags }

func newVersionCmd(f *Factory) *cobra.Command {
	o := &versionOptions{}
	c := &cobra.Command{
		Use:     "version",
		Short:   "Print lab's version, the node image it creates clusters from and the components it pins",
		Example: "  lab version\n  lab version -o json | jq -r .labVersion.gitVersion",
		Args:    cobra.NoArgs,
		RunE:    runE(f, o),
	}
	o.out.addFlags(c)
	return c
}

func (o *versionOptions) complete(*Factory, *cobra.Command, []string) error { return nil }

func (o *versionOptions) validate() error { return o.out.validate() }

func (o *versionOptions) run(_ context.Context, f *Factory) error {
	v := versionOutput{LabVersion: version.Get(), NodeImage: cluster.NodeImage(), Components: map[string]string{}}
	v.KubernetesVersion = cluster.KubernetesVersion(v.NodeImage)
	for _, c := range tools.Components() {
		v.Components[c.Name] = c.Version
	}
	return o.out.print(f.Out, v, func() error {
		fmt.Fprintf(f.Out, "Lab Version: %s\n", v.LabVersion.GitVersion)
		fmt.Fprintf(f.Out, "Go Version: %s\nPlatform: %s\n", v.LabVersion.GoVersion, v.LabVersion.Platform)
		fmt.Fprintf(f.Out, "Node Image: %s\n", v.NodeImage)
		if v.KubernetesVersion != "" {
			fmt.Fprintf(f.Out, "Kubernetes Version: %s\n", v.KubernetesVersion)
		}
		for _, c := range tools.Components() {
			fmt.Fprintf(f.Out, "%s Version: %s\n", title(c.Name), c.Version)
		}
		return nil
	})
}

// title names a component as kubectl names Kustomize: metrics-server is "Metrics Server".
func title(name string) string {
	words := strings.Split(name, "-")
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}
