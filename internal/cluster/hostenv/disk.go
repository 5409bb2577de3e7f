package hostenv

import "fmt"

// From the project's own figures: the node image is about 1 GB in Docker and the workload images' archive
// about 150 MB, together with the pull's temporary layers and the components' images; each node's /var volume
// then holds the images loaded into it again, unpacked by its containerd, beside etcd's data and the logs.
const (
	imagesDisk = 2 << 30
	nodeDisk   = 1 << 30
)

// DiskNeeded is the free space in Docker's data root a cluster with one control plane and the given workers
// needs: its images and its nodes' volumes.
func DiskNeeded(workers int) int64 { return imagesDisk + int64(workers+1)*nodeDisk }

// CheckDisk refuses to start a cluster whose images and nodes would fill Docker's data root dir; free < 0
// means unknown (an engine in a VM or on another host).
func CheckDisk(free int64, dir string, workers int) error {
	need := DiskNeeded(workers)
	if free < 0 || free >= need {
		return nil
	}
	return fmt.Errorf("too little free disk: %.1f GiB free in Docker's data root %s, a lab cluster with %d node(s) needs %.1f GiB: "+
		"remove what Docker no longer uses (`docker system prune`) or delete clusters you do not use (`lab cluster delete`)",
		gib(free), dir, workers+1, gib(need))
}

// FreeDisk is the free space in Docker's data root, measured only when the engine shares this host's disks;
// -1 when it does not or the filesystem does not say.
func FreeDisk(d Docker) int64 {
	if !d.OnThisHost || d.DockerRootDir == "" {
		return -1
	}
	return freeBytes(d.DockerRootDir)
}
