package localcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/internal/pidfile"
)

// Timeouts of the end-to-end test.
const (
	upTimeout    = 5 * time.Minute
	downTimeout  = time.Minute
	buildTimeout = 10 * time.Minute
	podsTimeout  = 2 * time.Minute
	pollEvery    = 250 * time.Millisecond
)

// shImage is mapped to /bin/sh on the test's cluster.
const shImage = "kafkachaos.test/sh"

// sleeperScript records, in the pod's volume, the hostname and the
// working directory it saw, one line per start, and whether it found the file that every start writes
// outside its volumes (strayFile), then sleeps. It refuses to start before
// the init container has run.
const sleeperScript = `test -f /var/lib/sleeper/data/inits || exit 3; hostname >> /var/lib/sleeper/data/hostname && pwd >> /var/lib/sleeper/data/cwd && echo start >> /var/lib/sleeper/data/starts && ` +
	`{ test -e ` + strayFile + ` && echo seen || echo none; } >> /var/lib/sleeper/data/stray && hostname > ` + strayFile + ` && exec sleep 3600`

// strayFile is written by every sleeper outside its volumes: into its
// container's own filesystem, which no other container and not the host
// may see.
const strayFile = "/var/tmp/kafkachaos-e2e-stray"

// sleeperInitScript is the sleeper's init container: its first run on a
// volume fails (the pod must retry it), later ones record one line per pod.
const sleeperInitScript = `test -f /var/lib/sleeper/data/init-tried || { touch /var/lib/sleeper/data/init-tried; exit 1; }; echo init >> /var/lib/sleeper/data/inits`

// buildAgent builds the kafkachaos-node binary the node agent runs. These
// tests run no pod of the project's image, so kafkachaos is not built.
func buildAgent(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), AgentBinaryName)
	ctx, cancel := context.WithTimeout(t.Context(), buildTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/kafkachaos/kafkachaos/cmd/kafkachaos-node").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestNodeAgentRunsStatefulSet brings the whole cluster up (control plane
// and node agent), runs a StatefulSet, force-deletes a pod, cordons a node,
// and takes the cluster down, checking no process is left.
func TestNodeAgentRunsStatefulSet(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: needs the built control plane")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	// Paths the pods make inside their own filesystems, which the host
	// must not get (those it has already are not checked).
	if _, err := os.Lstat(strayFile); err == nil {
		t.Fatalf("%s is on the host already (left by an older kafkachaos?): remove it, or every start would see it", strayFile)
	}
	var hostMustNotGet []string
	for _, p := range []string{"/var/lib/sleeper", "/sleeper-info", "/run/secrets", strayFile} {
		if _, err := os.Lstat(p); err != nil {
			hostMustNotGet = append(hostMustNotGet, p)
		}
	}
	probe, _ := New(WithStateDir(t.TempDir()))
	if _, err := probe.binaries(); err != nil && os.Getenv("CI") == "" {
		t.Skipf("control plane not built (CI would fail here): %v", err)
	}
	c, err := New(WithStateDir(t.TempDir()), WithAgentBinary(buildAgent(t)), WithImage(shImage, sh), WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	downDone := false
	t.Cleanup(func() {
		if downDone {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), downTimeout)
		defer cancel()
		if t.Failed() {
			t.Logf("node agent log:\n%s", tailFile(c.agent().logFile(), 60))
		}
		if err := c.Down(ctx, false); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), upTimeout)
	defer cancel()
	start := time.Now()
	if err := c.Up(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster with %d nodes up in %s", c.Nodes(), time.Since(start).Round(time.Millisecond))
	if err := c.Up(ctx); err != nil {
		t.Fatalf("second Up (idempotent): %v", err)
	}
	for _, s := range c.Status() {
		if !s.Running {
			t.Errorf("%s not running after Up", s.Name)
		}
	}
	cs, err := c.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	if v, err := cs.Discovery().ServerVersion(); err != nil || v.GitVersion != KubernetesVersion {
		t.Errorf("server version %v, %v; want %s", v, err, KubernetesVersion)
	}

	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zones := map[string]bool{}
	for _, n := range nodes.Items {
		zones[n.Labels["topology.kubernetes.io/zone"]] = true
	}
	if len(nodes.Items) != 3 || len(zones) != 3 {
		t.Fatalf("%d nodes in zones %v; want 3 nodes in 3 zones", len(nodes.Items), zones)
	}

	ns := "default"
	waitFor(t, ctx, "the default service account", func() (string, bool) {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return fmt.Sprint(err), err == nil
	})
	replicas := int32(3)
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "sleeper", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: "sleeper",
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sleeper"}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "sleeper"}},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptrTo(int64(5)),
					Volumes: []corev1.Volume{{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
						Items: []corev1.DownwardAPIVolumeFile{{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					}}}},
					InitContainers: []corev1.Container{{
						Name: "init", Image: shImage + ":1", Args: []string{"-c", sleeperInitScript},
						VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/sleeper/data"}},
					}},
					Containers: []corev1.Container{{
						Name: "main", Image: shImage + ":1", Args: []string{"-c", sleeperScript},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "data", MountPath: "/var/lib/sleeper/data"},
							// A new top-level directory, as /bitnami: made in
							// the container's own filesystem.
							{Name: "info", MountPath: "/sleeper-info", ReadOnly: true},
						},
						// An exec probe that can only pass inside the pod's
						// mount namespace, where its volumes are.
						ReadinessProbe: &corev1.Probe{
							ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{
								"sh", "-c", "test -f /var/lib/sleeper/data/starts && test \"$(cat /sleeper-info/name)\" = \"$(hostname)\" && test -s /var/run/secrets/kubernetes.io/serviceaccount/token"}}},
							PeriodSeconds: 1,
						},
						Env: []corev1.EnvVar{{Name: "INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
							FieldPath: "metadata.labels['apps.kubernetes.io/pod-index']"}}}},
					}},
				},
			},
		},
	}
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "3 Ready sleeper pods", func() (string, bool) { return readyPods(ctx, cs, ns, 3) })
	// Each init container failed once on its fresh volume and was retried;
	// the app container started only after it, so never exited.
	sleepers, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=sleeper"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range sleepers.Items {
		is, cs := p.Status.InitContainerStatuses, p.Status.ContainerStatuses
		if len(is) != 1 || is[0].RestartCount != 1 || is[0].State.Terminated == nil || is[0].State.Terminated.ExitCode != 0 || len(cs) != 1 || cs[0].RestartCount != 0 {
			t.Errorf("%s: init statuses %+v, app statuses %+v; want the init container completed after one retry, the app container never restarted", p.Name, is, cs)
		}
	}
	waitFor(t, ctx, "3 Bound claims", func() (string, bool) {
		pvcs, err := cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error(), false
		}
		var seen []string
		bound := 0
		for _, c := range pvcs.Items {
			seen = append(seen, c.Name+":"+string(c.Status.Phase))
			if c.Status.Phase == corev1.ClaimBound {
				bound++
			}
		}
		return strings.Join(seen, " "), bound == 3
	})

	// Force delete, as kubectl delete pod --grace-period=0 --force.
	old, err := cs.CoreV1().Pods(ns).Get(ctx, "sleeper-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldPID := containerPID(old)
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-sleeper-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("PV of data-sleeper-1 (%q): %v", pvc.Spec.VolumeName, err)
	}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "sleeper-1", metav1.DeleteOptions{GracePeriodSeconds: ptrTo(int64(0))}); err != nil {
		t.Fatal(err)
	}
	forced := time.Now()
	waitFor(t, ctx, "sleeper-1 back as a new Ready pod", func() (string, bool) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "sleeper-1", metav1.GetOptions{})
		if err != nil {
			return err.Error(), false
		}
		return fmt.Sprintf("uid %s ready %t", p.UID, kube.PodReady(p)), p.UID != old.UID && kube.PodReady(p)
	})
	t.Logf("sleeper-1 force-deleted and Ready again as a new pod in %s", time.Since(forced).Round(time.Millisecond))
	waitFor(t, ctx, fmt.Sprintf("the old process %d gone", oldPID), func() (string, bool) {
		return "still running", !processAlive(oldPID)
	})
	// The new pod mounted the same volume: it holds both starts, and the
	// hostname each start saw is the pod's name.
	if pv.Spec.HostPath == nil {
		t.Fatalf("PV %s is not a hostPath volume", pv.Name)
	}
	waitFor(t, ctx, "two starts recorded in sleeper-1's volume", func() (string, bool) {
		raw, err := os.ReadFile(filepath.Join(pv.Spec.HostPath.Path, "starts"))
		return fmt.Sprintf("%q %v", raw, err), strings.Count(string(raw), "start") == 2
	})
	// The init container ran once per pod, after a failed first try.
	if raw, err := os.ReadFile(filepath.Join(pv.Spec.HostPath.Path, "inits")); err != nil || string(raw) != "init\ninit\n" {
		t.Errorf("init container runs recorded by sleeper-1: %q, %v; want one per pod, two", raw, err)
	}
	if raw, err := os.ReadFile(filepath.Join(pv.Spec.HostPath.Path, "hostname")); err != nil || string(raw) != "sleeper-1\nsleeper-1\n" {
		t.Errorf("hostnames seen by sleeper-1: %q, %v; want sleeper-1 twice", raw, err)
	}
	// A container without a workingDir starts in /, as a runtime starts
	// an image without a WORKDIR (apache/kafka's has none).
	if raw, err := os.ReadFile(filepath.Join(pv.Spec.HostPath.Path, "cwd")); err != nil || string(raw) != "/\n/\n" {
		t.Errorf("working directories seen by sleeper-1: %q, %v; want / twice", raw, err)
	}
	// Each container has a filesystem of its own: no start saw what an
	// earlier one (of this pod, or of the other sleepers) wrote outside
	// its volumes (strayFile), and the host sees neither that nor the
	// mount points the pods made.
	if raw, err := os.ReadFile(filepath.Join(pv.Spec.HostPath.Path, "stray")); err != nil || string(raw) != "none\nnone\n" {
		t.Errorf("sleeper-1's starts looking for %s: %q, %v; want none twice", strayFile, raw, err)
	}
	for _, p := range hostMustNotGet {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists on the host: a pod's filesystem leaked out of its namespace", p)
		}
	}
	pvc2, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-sleeper-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pv2, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc2.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pvc2.UID != pvc.UID || pv2.Name != pv.Name || pv2.UID != pv.UID || pv2.Status.Phase != corev1.VolumeBound {
		t.Errorf("after the force delete: PVC %s (uid %s) -> PV %s (uid %s, %s); want the same PVC %s -> PV %s (uid %s), Bound",
			pvc2.Name, pvc2.UID, pv2.Name, pv2.UID, pv2.Status.Phase, pvc.UID, pv.Name, pv.UID)
	}

	// A container's image changed in place, to a pause image and back.
	checkImageSwap(t, ctx, cs, ns)

	// Cordon the node of sleeper-0, delete the pod: it must land elsewhere.
	p0, err := cs.CoreV1().Pods(ns).Get(ctx, "sleeper-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cordoned := p0.Spec.NodeName
	n, err := cs.CoreV1().Nodes().Get(ctx, cordoned, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Spec.Unschedulable = true
	if _, err := cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "sleeper-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "sleeper-0 back, off the cordoned node", func() (string, bool) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "sleeper-0", metav1.GetOptions{})
		if err != nil {
			return err.Error(), false
		}
		return fmt.Sprintf("uid %s on %q ready %t", p.UID, p.Spec.NodeName, kube.PodReady(p)),
			p.UID != p0.UID && kube.PodReady(p) && p.Spec.NodeName != cordoned
	})

	// Down: nothing the cluster started may be left.
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range pods.Items {
		pids = append(pids, containerPID(&p))
	}
	for _, s := range c.Status() {
		pids = append(pids, s.PID)
	}
	if err := c.Down(ctx, false); err != nil {
		t.Fatal(err)
	}
	downDone = true
	waitFor(t, ctx, "every process of the cluster gone", func() (string, bool) {
		var alive []int
		for _, pid := range pids {
			if pid > 0 && processAlive(pid) {
				alive = append(alive, pid)
			}
		}
		return fmt.Sprintf("still alive: %v", alive), len(alive) == 0
	})
}

// waitFor waits up to podsTimeout for cond.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() (string, bool)) {
	t.Helper()
	waitLong(t, ctx, podsTimeout, what, cond)
}

// waitLong polls cond until it holds, failing after timeout with what it
// saw last.
func waitLong(t *testing.T, ctx context.Context, timeout time.Duration, what string, cond func() (string, bool)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		seen, ok := cond()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: not after %s; last seen: %s", what, timeout, seen)
		case <-time.After(pollEvery):
		}
	}
}

func readyPods(ctx context.Context, cs kubernetes.Interface, ns string, want int) (string, bool) {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=sleeper"})
	if err != nil {
		return err.Error(), false
	}
	var seen []string
	ready := 0
	for _, p := range pods.Items {
		seen = append(seen, fmt.Sprintf("%s:%s/ready=%t", p.Name, p.Status.Phase, kube.PodReady(&p)))
		if kube.PodReady(&p) {
			ready++
		}
	}
	return strings.Join(seen, " "), ready == want
}

// containerPID reads the pid from the agent's process:// container ID.
func containerPID(p *corev1.Pod) int {
	for _, cs := range p.Status.ContainerStatuses {
		if id, ok := strings.CutPrefix(cs.ContainerID, "process://"); ok {
			pid, _ := strconv.Atoi(id)
			return pid
		}
	}
	return 0
}

func processAlive(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil && !pidfile.Zombie(pid)
}

func ptrTo[T any](v T) *T { return &v }

// TestFailedUpLeavesNothing starts a fresh cluster whose node agent exits
// at once: Up must fail, and stop the control plane it started.
func TestFailedUpLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the control plane")
	}
	c, err := New(WithStateDir(t.TempDir()), WithAgentBinary("/bin/false"), WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), upTimeout)
	defer cancel()
	if err := c.Up(ctx); err == nil {
		_ = c.Down(context.Background(), true)
		t.Fatal("Up with a node agent that exits at once succeeded")
	}
	for _, st := range c.Status() {
		if st.Running {
			t.Errorf("%s still runs (pid %d) after a failed Up", st.Name, st.PID)
		}
	}
}
