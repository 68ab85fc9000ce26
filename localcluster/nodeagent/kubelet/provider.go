// A file over 400 lines: the virtual-kubelet provider's whole interface
// (create, delete, status, logs, exec, port-forward, stats) in one place.

package kubelet

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/localcluster/netpol"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent/sandbox"
)

// hostIP is every node's address: the nodes share this machine.
const hostIP = "127.0.0.1"

// provider runs one node's pods as host processes.
type provider struct {
	client kubernetes.Interface
	node   string
	ipam   *ipam
	hosts  *hostsFile
	rt     runtimes
	podDir string // logs per pod under here
	// cgroups gives each pod the cgroup its connections are known by, for
	// NetworkPolicy; nil when this host cannot enforce policies.
	cgroups         *netpol.Cgroups
	policiesChanged func()

	mu     sync.Mutex
	pods   map[string]*podRun // namespace/name
	notify func(*corev1.Pod)
}

var _ nodeutil.Provider = (*provider)(nil)

func key(ns, name string) string { return ns + "/" + name }

// CreatePod implements node.PodLifecycleHandler. The pod's env has already
// been resolved (downward API, $(VAR) expansion, envFrom) by the node
// library.
func (p *provider) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	k := key(pod.Namespace, pod.Name)
	p.mu.Lock()
	if _, ok := p.pods[k]; ok {
		p.mu.Unlock()
		return nil
	}
	ip, err := p.ipam.allocate(string(pod.UID))
	if err != nil {
		p.mu.Unlock()
		return err
	}
	logDir := filepath.Join(p.podDir, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID))
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		p.mu.Unlock()
		p.ipam.release(string(pod.UID))
		return fmt.Errorf("agent: pod %s: %w", k, err)
	}
	vols, err := volumeDirs(ctx, p.client, pod, logDir)
	if err != nil {
		p.mu.Unlock()
		p.ipam.release(string(pod.UID))
		return err
	}
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	run := &podRun{pod: pod.DeepCopy(), ip: ip, stop: make(chan struct{}), logDir: logDir, notify: p.notify,
		hostname: hostname, mounts: map[string][]sandbox.Mount{}, cgroupFD: -1}
	if p.cgroups != nil {
		fd, _, err := p.cgroups.Open(string(pod.UID))
		if err != nil {
			p.mu.Unlock()
			p.ipam.release(string(pod.UID))
			return fmt.Errorf("agent: pod %s: %w", k, err)
		}
		run.cgroupFD = fd
	}
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		// Every pod resolves cluster names through the agent's hosts file.
		run.mounts[c.Name] = append(containerMounts(c, vols), sandbox.Mount{Source: p.hosts.path, Target: "/etc/hosts", ReadOnly: true})
	}
	if err := p.hosts.add(pod, ip); err != nil {
		p.mu.Unlock()
		p.ipam.release(string(pod.UID))
		run.closeCgroup()
		if p.cgroups != nil {
			_ = p.cgroups.Remove(string(pod.UID))
		}
		return err
	}
	now := time.Now()
	run.pod.Status.StartTime = ptr(metaTime(now))
	waiting := "ContainerCreating"
	if len(pod.Spec.InitContainers) > 0 {
		waiting = "PodInitializing"
	}
	for _, c := range pod.Spec.InitContainers {
		run.inits = append(run.inits, newCtrRun(c, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}))
	}
	for _, c := range pod.Spec.Containers {
		run.ctrs = append(run.ctrs, newCtrRun(c, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting}}))
	}
	p.pods[k] = run
	p.mu.Unlock()
	if p.policiesChanged != nil {
		p.policiesChanged()
	}

	go run.start(p.rt, func(c corev1.Container) []string {
		return append(containerEnv(pod, c, ip), nodeagent.PodDirEnv+"="+logDir)
	})
	run.changed()
	return nil
}

// containerEnv is the process environment: a minimal base, the pod's
// identity, then the container's resolved env.
func containerEnv(pod *corev1.Pod, c corev1.Container, ip string) []string {
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"HOSTNAME=" + hostname,
		nodeagent.PodIPEnv + "=" + ip,
	}
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		env = append(env, "JAVA_HOME="+jh)
	}
	for _, e := range c.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	return env
}

// withExpandedArgs returns c with $(VAR) in its command and args replaced
// by the values of its env, as the kubelet does (the node library resolves
// the env, and the env's own references, but leaves command and args to
// the kubelet).
func withExpandedArgs(c corev1.Container) corev1.Container {
	vals := make(map[string]string, len(c.Env))
	for _, e := range c.Env {
		vals[e.Name] = e.Value
	}
	expand := func(in []string) []string {
		var out []string
		for _, s := range in {
			out = append(out, kube.Expand(s, vals))
		}
		return out
	}
	c.Command, c.Args = expand(c.Command), expand(c.Args)
	return c
}

// DeletePod implements node.PodLifecycleHandler: SIGTERM, then SIGKILL after
// the grace period; a force delete (grace 0) kills at once.
func (p *provider) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	k := key(pod.Namespace, pod.Name)
	p.mu.Lock()
	run, ok := p.pods[k]
	p.mu.Unlock()
	if !ok {
		return errdefs.NotFoundf("pod %s not found", k)
	}
	grace := defaultGrace
	switch {
	case pod.DeletionTimestamp == nil:
		// The node library calls with its own copy when the pod is gone
		// from the API before it saw the deletion: a force delete (grace
		// 0) that raced its worker. Killed as the API asked, not with the
		// spec's grace: otherwise a force delete was a graceful stop or a
		// SIGKILL by chance (seen: Kafka's controlled shutdown moving the
		// leaders 0.5 s after a "kill").
		grace = 0
	case pod.DeletionGracePeriodSeconds != nil:
		grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		grace = time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	run.mu.Lock()
	select {
	case <-run.stop:
	default:
		close(run.stop)
	}
	run.mu.Unlock()
	run.kill(grace)

	p.mu.Lock()
	if p.pods[k] == run {
		delete(p.pods, k)
	}
	p.mu.Unlock()
	p.ipam.release(string(pod.UID))
	_ = p.hosts.remove(pod)
	run.closeCgroup()
	if p.cgroups != nil {
		if err := p.cgroups.Remove(string(pod.UID)); err != nil {
			fmt.Fprintf(os.Stderr, "agent: pod %s: %v\n", k, err)
		}
	}
	if p.policiesChanged != nil {
		p.policiesChanged()
	}
	// The pod's emptyDirs and its containers' scratch dirs go with it; its
	// logs stay.
	for _, d := range []string{"volumes", "scratch"} {
		_ = os.RemoveAll(filepath.Join(run.logDir, d))
	}
	final := run.snapshot()
	for _, statuses := range [][]corev1.ContainerStatus{final.Status.InitContainerStatuses, final.Status.ContainerStatuses} {
		for i := range statuses {
			cs := &statuses[i]
			if cs.State.Terminated == nil {
				cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Killed", FinishedAt: metaTime(time.Now())}}
			}
			cs.Ready = false
		}
	}
	run.finish(final, p.notify)
	if pod.DeletionTimestamp != nil {
		p.removePodObject(ctx, pod)
	}
	return nil
}

// removePodObject deletes a pod whose containers have stopped from the API
// server at once, as the kubelet does. The node library would leave it
// Terminating until its grace period ends, since it reacts to spec changes
// and not to status ones; a StatefulSet waits for the object to be gone
// before it recreates the pod. While the delete fails (the API server
// restarting, say) it is retried in the background, 0.5 s doubling to 5 s
// apart, for up to removeRetryTime, as the kubelet's status manager keeps
// trying.
func (p *provider) removePodObject(ctx context.Context, pod *corev1.Pod) {
	uid := pod.UID
	remove := func(ctx context.Context) error {
		err := p.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: new(int64),
			Preconditions:      &metav1.Preconditions{UID: &uid},
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) { // gone, or another pod of that name
			return nil
		}
		return err
	}
	err := remove(ctx)
	if err == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "agent: removing stopped pod %s/%s: %v; retrying for up to %s\n", pod.Namespace, pod.Name, err, removeRetryTime)
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeRetryTime)
		defer cancel()
		// Step keeps returning the cap once reached, so the attempts go
		// on until ctx ends.
		b := wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: 5 * time.Second}
		if b.DelayFunc().Until(ctx, false, true, func(ctx context.Context) (bool, error) {
			err = remove(ctx)
			return err == nil, nil
		}) != nil {
			// The node library deletes it when the grace period ends.
			fmt.Fprintf(os.Stderr, "agent: removing stopped pod %s/%s: gave up after %s: %v\n", pod.Namespace, pod.Name, removeRetryTime, err)
		}
	}()
}

// removeRetryTime bounds the retries of removePodObject.
const removeRetryTime = 2 * time.Minute

// GetPod implements node.PodLifecycleHandler.
func (p *provider) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	p.mu.Lock()
	run, ok := p.pods[key(ns, name)]
	p.mu.Unlock()
	if !ok {
		return nil, errdefs.NotFoundf("pod %s/%s not found", ns, name)
	}
	return run.snapshot(), nil
}

// GetPodStatus implements node.PodLifecycleHandler.
func (p *provider) GetPodStatus(ctx context.Context, ns, name string) (*corev1.PodStatus, error) {
	pod, err := p.GetPod(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods implements node.PodLifecycleHandler.
func (p *provider) GetPods(context.Context) ([]*corev1.Pod, error) {
	p.mu.Lock()
	runs := make([]*podRun, 0, len(p.pods))
	for _, r := range p.pods {
		runs = append(runs, r)
	}
	p.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(runs))
	for _, r := range runs {
		out = append(out, r.snapshot())
	}
	return out, nil
}

// NotifyPods implements node.PodNotifier.
func (p *provider) NotifyPods(_ context.Context, cb func(*corev1.Pod)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = cb
	for _, r := range p.pods {
		r.notify = cb
	}
}

var errNotSupported = errdefs.InvalidInput("not supported by the kafkachaos local node agent")

// AttachToContainer implements nodeutil.Provider; attach is not supported.
func (p *provider) AttachToContainer(context.Context, string, string, string, api.AttachIO) error {
	return errNotSupported
}

// GetStatsSummary implements nodeutil.Provider (the kubelet's
// /stats/summary).
func (p *provider) GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error) {
	return p.statsSummary()
}

// GetMetricsResource implements nodeutil.Provider with no metrics.
func (p *provider) GetMetricsResource(context.Context) ([]*dto.MetricFamily, error) { return nil, nil }

// PortForward implements nodeutil.Provider: it connects stream to port
// on the pod's IP, as the kubelet does in the pod's network namespace.
// kubectl port-forward and the API server's pods/portforward work through
// it; the API server's pod proxy does not, as it refuses loopback pod IPs.
func (p *provider) PortForward(ctx context.Context, ns, name string, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	p.mu.Lock()
	run, ok := p.pods[key(ns, name)]
	p.mu.Unlock()
	if !ok {
		return errdefs.NotFoundf("pod %s/%s not found", ns, name)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(run.ip, strconv.Itoa(int(port))))
	if err != nil {
		return fmt.Errorf("port-forward to %s/%s:%d: %w", ns, name, port, err)
	}
	defer conn.Close()
	// The client's end of input is passed on as a half-close; the forward
	// ends when the pod closes its side (or the request ends).
	go func() {
		_, _ = io.Copy(conn, stream)
		_ = conn.(*net.TCPConn).CloseWrite()
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(stream, conn)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return nil
}

// killAll ends every pod's processes at once.
func (p *provider) killAll() {
	p.mu.Lock()
	runs := make([]*podRun, 0, len(p.pods))
	for _, r := range p.pods {
		runs = append(runs, r)
	}
	p.mu.Unlock()
	for _, r := range runs {
		r.mu.Lock()
		select {
		case <-r.stop:
		default:
			close(r.stop)
		}
		r.mu.Unlock()
		r.kill(0)
	}
}
