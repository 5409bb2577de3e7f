package injector

import (
	"context"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/kube"
)

func init() {
	Register("waitPods", waitPods)
}

// waitPods changes nothing: it waits until args.count Pods match args.selector in args.namespace. An apply's
// wait stops at the first Pod, and a scenario whose next fault competes for the same quota or node needs the
// earlier workload complete, or the two race.
func waitPods(ctx context.Context, i *Injector, args map[string]string) error {
	want, err := strconv.Atoi(args["count"])
	if err != nil || want < 1 || args["namespace"] == "" || args["selector"] == "" {
		return fmt.Errorf("waitPods needs namespace, selector and a positive count, got %v", args)
	}
	got := 0
	err = kube.Poll(ctx, 300*time.Millisecond, waitTimeout, func(ctx context.Context) (bool, error) {
		pl, err := i.env.Clients.Kube.CoreV1().Pods(args["namespace"]).List(ctx, metav1.ListOptions{LabelSelector: args["selector"]})
		if err != nil {
			return false, nil
		}
		got = len(pl.Items)
		return got >= want, nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d Pods %s in %s after %s: %w", got, want, args["selector"], args["namespace"], waitTimeout, err)
	}
	return nil
}
