package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cka-lab/lab/e2e/framework"
)

// dockerPidFile is where dockerd records itself unless told otherwise.
const dockerPidFile = "/var/run/docker.pid"

// A Docker daemon restart stops every node container under a running scenario. Serial: it stops every other
// process's cluster too.
var _ = Describe("a Docker daemon restart under a running scenario", Serial, Label("safety", "docker-restart"), func() {
	It("is reported by `lab status`, and `lab cluster create` and `lab reset` recover from it", func(ctx SpecContext) {
		b, err := os.ReadFile(dockerPidFile)
		if os.Getuid() != 0 || err != nil {
			Skip("needs root and a dockerd that writes " + dockerPidFile + " (make test starts one)")
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		Expect(err).NotTo(HaveOccurred())
		lab.MustRun(ctx, "start", "taint-dedicated-node", "--seed", "5")

		By("stopping dockerd")
		Expect(syscall.Kill(pid, syscall.SIGTERM)).To(Succeed())
		Eventually(func() bool {
			_, err := os.Stat(dockerPidFile)
			return os.IsNotExist(err)
		}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(BeTrue())
		expectOneLineError(lab.Run(ctx, "status"), "the Docker daemon is not running")

		By("starting Docker again, as make test does")
		out, err := exec.CommandContext(ctx, filepath.Join("..", "hack", "prereqs.sh")).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)

		lab.MustRun(ctx, "cluster", "create")
		st := framework.JSON[statusJSON](lab.MustRun(ctx, "status", "-o", "json"))
		Expect(st.Attempt.Scenario).To(Equal("taint-dedicated-node"), "the attempt survives the restart")
		r := lab.Run(ctx, "reset", "-o", "json")
		Expect(r.Code).To(Equal(0), "%s", r)
		Expect(framework.JSON[resetJSON](r).Clean).To(BeTrue(), "%s", r)
	}, SpecTimeout(12*time.Minute))
})
