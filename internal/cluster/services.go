package cluster

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/cka-lab/lab/internal/node"
)

// serviceCIDR is kind's default Service range, which lab's cluster configuration keeps.
const serviceCIDR = "10.96.0.0/16"

// rejectUnrouted makes every node refuse a connection to a Service IP that kube-proxy has not routed to a Pod,
// as kube-proxy itself does for a Service without endpoints. Without it, a connection opened in the moment
// between a Service's creation and kube-proxy's next sync leaves through the node's default route; on a host
// whose network answers any address (a transparent proxy), the API server's aggregator then keeps an HTTP/2
// connection to that answer, and an aggregated API such as metrics.k8s.io serves 404s for good. The rules come
// after kube-proxy's: a connection it routed has a Pod's address by then.
func rejectUnrouted(ctx context.Context, ns []nodes.Node) error {
	script := `for chain in OUTPUT FORWARD; do
  iptables -C "$chain" -d "$1" -j REJECT 2>/dev/null || iptables -A "$chain" -d "$1" -j REJECT || exit 1
done`
	g, gctx := errgroup.WithContext(ctx)
	for _, n := range ns {
		g.Go(func() error {
			if _, err := node.Run(gctx, n, "sh", "-c", script, "sh", serviceCIDR); err != nil {
				return fmt.Errorf("refuse unrouted Service addresses on %s: %w", n, err)
			}
			return nil
		})
	}
	return g.Wait()
}
