package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cka-lab/lab/e2e/framework"
	"github.com/cka-lab/lab/internal/cluster"
	"github.com/cka-lab/lab/internal/namespace"
)

var _ = Describe("the lab cluster", Ordered, Label("cluster"), func() {
	const ns = "e2e-cluster"

	It("is reused, not recreated, by a second create", func(ctx SpecContext) {
		r := lab.MustRun(ctx, "cluster", "create")
		Expect(r.Stdout).To(ContainSubstring("Reusing lab cluster"))
	})

	It("reports its status and the KUBECONFIG line", func(ctx SpecContext) {
		r := lab.MustRun(ctx, "cluster", "status")
		Expect(r.Stdout).To(ContainSubstring("State:    Running"))
		Expect(r.Stdout).To(ContainSubstring("export KUBECONFIG=" + lab.Kubeconfig()))
		st := framework.JSON[cluster.Status](lab.MustRun(ctx, "cluster", "status", "-o", "json"))
		Expect(st.Nodes).To(HaveLen(2))
	})

	It("has every node Ready and every kube-system Pod Running", func(ctx SpecContext) {
		nl, err := clients.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(nl.Items).To(HaveLen(2))
		for _, n := range nl.Items {
			Expect(cluster.NodeReady(&n)).To(BeTrue(), "node %s", n.Name)
		}
		pl, err := clients.Kube.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(pl.Items).NotTo(BeEmpty())
		for _, p := range pl.Items {
			Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "pod %s", p.Name)
		}
	})

	It("carries lab's marker", func(ctx SpecContext) {
		cm, err := clients.Kube.CoreV1().ConfigMaps(cluster.MarkerNamespace).Get(ctx, cluster.MarkerName, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(cm.Data).To(HaveKeyWithValue("cluster", lab.Cluster))
		Expect(cm.Data["id"]).To(HaveLen(16))
	})

	It("has the workload images preloaded in every node", func(ctx SpecContext) {
		for _, n := range []string{lab.Cluster + "-control-plane", lab.Cluster + "-worker"} {
			r := lab.MustRun(ctx, "ssh", n, "--", "crictl", "images")
			Expect(r.Stdout).To(And(ContainSubstring("docker.io/library/nginx"), ContainSubstring("docker.io/library/busybox")), "node %s", n)
		}
	})

	Context("with workloads", Ordered, func() {
		BeforeAll(func(ctx SpecContext) {
			r := lab.Shell(ctx, "kubectl apply -f - <<'YAML'\n"+workloads+"YAML")
			Expect(r.Code).To(Equal(0), "%s", r)
			DeferCleanup(func(ctx SpecContext) {
				Expect(namespace.Delete(ctx, clients, ns)).To(Succeed())
			}, NodeTimeout(3*time.Minute))
		})

		It("runs nginx:1.27 on the worker, reachable from the control plane through a Service by its DNS name", func(ctx SpecContext) {
			waitReady(ctx, "web")
			waitReady(ctx, "client")
			web, err := clients.Kube.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(web.Spec.NodeName).To(Equal(lab.Cluster + "-worker"))
			client, err := clients.Kube.CoreV1().Pods(ns).Get(ctx, "client", metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(client.Spec.NodeName).To(Equal(lab.Cluster + "-control-plane"))
			Eventually(func(g Gomega) {
				r := lab.Shell(ctx, "kubectl -n "+ns+" exec client -- timeout 5 wget -qO- http://web."+ns+".svc.cluster.local/")
				g.Expect(r.Stdout).To(ContainSubstring("Welcome to nginx"), "%s", r)
			}).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(2 * time.Second).Should(Succeed())
		})

		It("resolves the Service name through cluster DNS", func(ctx SpecContext) {
			r := lab.Shell(ctx, "kubectl -n "+ns+" exec client -- nslookup web."+ns+".svc.cluster.local")
			Expect(r.Code).To(Equal(0), "%s", r)
			svc, err := clients.Kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Stdout).To(ContainSubstring(svc.Spec.ClusterIP))
		})

		It("binds a PVC on the default StorageClass and a Pod writes to it", func(ctx SpecContext) {
			waitReady(ctx, "writer")
			Eventually(func(g Gomega) {
				pvc, err := clients.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound))
			}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
			r := lab.Shell(ctx, "kubectl -n "+ns+" exec writer -- cat /data/hello")
			Expect(r.Stdout).To(ContainSubstring("written by lab e2e"), "%s", r)
		})

		It("used the preloaded images without pulling", func(ctx SpecContext) {
			ev, err := clients.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
			Expect(err).NotTo(HaveOccurred())
			present := 0
			for _, e := range ev.Items {
				Expect(e.Reason).NotTo(Equal("Pulling"), "event %s: %s", e.InvolvedObject.Name, e.Message)
				if e.Reason == "Pulled" && strings.Contains(e.Message, "already present on machine") {
					present++
				}
			}
			Expect(present).To(BeNumerically(">=", 3))
		})
	})
})

func waitReady(ctx context.Context, pod string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		p, err := clients.Kube.CoreV1().Pods("e2e-cluster").Get(ctx, pod, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cluster.PodReady(p)).To(BeTrue(), "pod %s is %s", pod, p.Status.Phase)
	}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
}

const workloads = `apiVersion: v1
kind: Namespace
metadata: {name: e2e-cluster}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: e2e-cluster, labels: {app: web}}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: node-role.kubernetes.io/control-plane, operator: DoesNotExist}]
  containers:
  - name: nginx
    image: nginx:1.27
    ports: [{containerPort: 80}]
    readinessProbe: {httpGet: {path: /, port: 80}, periodSeconds: 2}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: e2e-cluster}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 80}]
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: e2e-cluster}
spec:
  nodeSelector: {node-role.kubernetes.io/control-plane: ""}
  tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}]
  terminationGracePeriodSeconds: 0
  containers:
  - name: bb
    image: busybox:1.36
    command: [sh, -c, "sleep 3600"]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: e2e-cluster}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 100Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: writer, namespace: e2e-cluster}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: bb
    image: busybox:1.36
    command: [sh, -c, "echo written by lab e2e > /data/hello && sleep 3600"]
    volumeMounts: [{name: data, mountPath: /data}]
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data}
`

var _ = Describe("cluster lifecycle", Label("cluster", "lifecycle"), func() {
	It("creates and deletes a lab cluster twice in a row", func(ctx SpecContext) {
		const name = "lab-e2e-twice"
		for round := 1; round <= 2; round++ {
			By(fmt.Sprintf("round %d", round))
			r := lab.Run(ctx, "cluster", "create", "--name", name)
			Expect(r.Code).To(Equal(0), "%s", r)
			Expect(r.Stdout).To(ContainSubstring(`Created lab cluster "` + name + `"`))
			recordTiming("cluster create", "create", r.Took)
			st := lab.MustRun(ctx, "cluster", "status", "--name", name)
			Expect(st.Stdout).To(ContainSubstring("State:    Running"))
			r = lab.Run(ctx, "cluster", "delete", "--name", name)
			Expect(r.Code).To(Equal(0), "%s", r)
			st = lab.Run(ctx, "cluster", "status", "--name", name)
			Expect(st.Stdout).To(ContainSubstring("State:    Missing"))
		}
	}, SpecTimeout(15*time.Minute))
})
