package hostenv

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Measured on kind v1.35 nodes at idle (control plane about 700 MiB, worker about 250 MiB), with headroom for
// the Pods scenarios run: below this a cluster comes up but scenarios time out in ways that look like faults.
const (
	controlPlaneMemory = 1200 << 20
	workerMemory       = 512 << 20
)

// MemoryNeeded is what a cluster with one control plane and the given workers needs free. $LAB_MEMORY_PER_NODE
// (a quantity such as 768Mi) replaces the per-node estimate, for machines that know better.
func MemoryNeeded(workers int) int64 {
	if q, err := resource.ParseQuantity(os.Getenv("LAB_MEMORY_PER_NODE")); err == nil && q.Value() > 0 {
		return int64(workers+1) * q.Value()
	}
	return controlPlaneMemory + int64(workers)*workerMemory
}

// CheckMemory refuses to start a cluster the machine cannot hold; available < 0 means unknown (not Linux).
func CheckMemory(available int64, workers int) error {
	need := MemoryNeeded(workers)
	if available < 0 || available >= need {
		return nil
	}
	return fmt.Errorf("too little free memory: %.1f GiB free, a lab cluster with %d node(s) needs %.1f GiB: "+
		"delete clusters you do not use (`lab cluster delete`, `kind get clusters`) or use fewer --workers",
		gib(available), workers+1, gib(need))
}

// AvailableMemory reads MemAvailable from /proc/meminfo; -1 when the kernel does not say.
func AvailableMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return -1
	}
	defer func() { _ = f.Close() }()
	return parseMemAvailable(bufio.NewScanner(f))
}

func parseMemAvailable(s *bufio.Scanner) int64 {
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

func gib(b int64) float64 { return float64(b) / (1 << 30) }
