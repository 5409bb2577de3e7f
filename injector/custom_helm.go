package injector

import (
	"context"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/kind/pkg/exec"

	"github.com/cka-lab/lab/injector/addons"
	"github.com/cka-lab/lab/internal/cluster/images"
	"github.com/cka-lab/lab/internal/node"
	"github.com/cka-lab/lab/internal/tools"
	"github.com/cka-lab/lab/scenarios"
)

func init() {
	Register("installHelm", installHelm)
	Register("helm", runHelm)
}

// Preflight says what this machine lacks for the faults before any is injected, so a start that cannot finish
// changes nothing: a helm to copy onto a node, a component's static binary or its upstream image.
func Preflight(ctx context.Context, faults []scenarios.Fault) error {
	for _, f := range faults {
		if f.Custom == nil || needs[f.Custom.Func] == nil {
			continue
		}
		if err := needs[f.Custom.Func](ctx); err != nil {
			return err
		}
	}
	return nil
}

// needs holds what a custom fault needs from this machine.
var needs = map[string]func(context.Context) error{
	"installHelm":    func(context.Context) error { _, err := tools.Helm(); return err },
	"installEtcdutl": func(context.Context) error { _, err := tools.Etcdutl(); return err },
	"installMetricsServer": func(ctx context.Context) error {
		return binaryOrImage(ctx, tools.MetricsServer, addons.MetricsServerImage, "metrics-server", tools.MetricsServerEnv)
	},
	"installGatewayController": func(ctx context.Context) error {
		return binaryOrImage(ctx, tools.Traefik, addons.TraefikImage, "traefik", tools.TraefikEnv)
	},
}

// binaryOrImage checks for a component's static binary (bin), or else its upstream image, pulled now if a
// registry answers.
func binaryOrImage(ctx context.Context, bin func() (string, error), upstream, name, env string) error {
	p, err := bin()
	if err != nil || p != "" {
		return err
	}
	if err := images.EnsureLocal(ctx, upstream); err != nil {
		return fmt.Errorf("this scenario needs %s: %w; or, without a registry, build it with `make %s` and set %s, or `lab bundle load` a bundle that carries it", name, err, name, env)
	}
	return nil
}

// helmPath is where an exam host has helm.
const helmPath = "/usr/local/bin/helm"

// adminKubeconfig is the cluster-admin kubeconfig kubeadm writes on a control-plane node.
const adminKubeconfig = "/etc/kubernetes/admin.conf"

// installHelm copies this machine's helm (tools.Helm) onto the node (args node) at /usr/local/bin/helm, as an
// exam host has it installed; reset removes it.
func installHelm(ctx context.Context, i *Injector, args map[string]string) error {
	return i.installProgram(ctx, args["node"], program{
		find: tools.Helm, path: helmPath, check: []string{"version", "--short"},
		fix: fmt.Sprintf("set %s to one, or build it with `make helm`", tools.HelmEnv),
	})
}

// program is a tool of this machine that a scenario installs on a node, as an exam host has it.
type program struct {
	find  func() (string, error)
	path  string
	check []string // arguments that make it print its version: it runs on the node
	fix   string   // how to give lab one that does
}

// installProgram copies p onto the node named name; reset removes it.
func (i *Injector) installProgram(ctx context.Context, name string, p program) error {
	src, err := p.find()
	if err != nil {
		return err
	}
	n, err := i.node(name)
	if err != nil {
		return err
	}
	if err := i.recordFile(ctx, n, p.path); err != nil {
		return err
	}
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	cmd := n.CommandContext(ctx, "sh", "-c", `cat > "$1" && chmod 0755 "$1"`, "sh", p.path)
	cmd.SetStdin(f)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("copy %s to %s on %s: %w", src, p.path, n, exec.RunErrorForError(err))
	}
	if _, err := node.Run(ctx, n, p.path, p.check...); err != nil {
		return fmt.Errorf("%s does not run on %s, which needs a Linux binary of its architecture (%s): %w", src, n, p.fix, err)
	}
	return nil
}

// runHelm runs `helm install` or `helm upgrade` (args args, split on spaces) on the node (args node) against
// the cluster, as a colleague did there before the task. The release lives in args namespace, which must be a
// namespace the scenario created: reset deletes the release's objects and history with it.
func runHelm(ctx context.Context, i *Injector, args map[string]string) error {
	argv := strings.Fields(args["args"])
	if len(argv) == 0 || (argv[0] != "install" && argv[0] != "upgrade") {
		return fmt.Errorf("helm fault runs install or upgrade, not %q", args["args"])
	}
	ns := args["namespace"]
	if err := i.ownNamespace(ns, "helm release"); err != nil {
		return err
	}
	n, err := i.node(args["node"])
	if err != nil {
		return err
	}
	argv = append(argv, "--namespace", ns, "--kubeconfig", adminKubeconfig)
	if _, err := node.Run(ctx, n, helmPath, argv...); err != nil {
		return fmt.Errorf("helm %s: %w", args["args"], err)
	}
	return nil
}
