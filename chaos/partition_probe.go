package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reach is one TCP connection Probe tried from inside a pod.
type Reach struct {
	// From and To are pod names. From == To is a control: the pod
	// connecting to its own IP, which no partition cuts; if that fails the
	// probe of that pod tells nothing.
	From, To string
	Port     int32
	// Want is whether the partition's mode allows the connection; Got is
	// whether it connected.
	Want, Got bool
}

func (r Reach) String() string {
	state := func(open bool) string {
		if open {
			return "open"
		}
		return "closed"
	}
	return fmt.Sprintf("%s -> %s:%d %s (want %s)", r.From, r.To, r.Port, state(r.Got), state(r.Want))
}

// probeScript is the shell script Probe runs in a pod through pods/exec.
// Its arguments are pairs IP PORT; it tries a TCP connect to each, all at
// once, each for at most 3 s (bash's /dev/tcp), and prints a line "IP PORT
// open" or "IP PORT closed" per pair, in any order. A connection refused,
// reset or timed out is closed alike.
const probeScript = `command -v bash >/dev/null 2>&1 || { echo "no bash in this container: the probe needs its /dev/tcp" >&2; exit 3; }
command -v timeout >/dev/null 2>&1 || { echo "no timeout in this container" >&2; exit 3; }
while [ $# -ge 2 ]; do
	(if timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>/dev/null; then echo "$1 $2 open"; else echo "$1 $2 closed"; fi) &
	shift 2
done
wait`

// allowed says whether the mode's policy lets the victim and another Kafka
// pod connect, either way, on port.
func (f *Partition) allowed(_ *corev1.Pod, port int32) bool {
	switch f.Mode {
	case PartitionPeersOnly:
		return port == f.controllerPort()
	case PartitionController:
		return port == f.brokerPort()
	case PartitionClients:
		return true
	}
	return false
}

// Probe shows whether the partition holds, from inside the pods through
// Exec: the victim tries a TCP connect to each other Kafka pod's IP
// (status.podIP, no DNS) on BrokerPort and ControllerPort, and one other
// Kafka pod tries the victim's IP on both. A pod is tried only on the ports
// one of its containers declares (containerPort): a port nobody listens on
// is closed whatever the policy says. Each of the two pods also connects to
// its own IP on a port it declares, as a control. Want is what the mode
// allows, not what the policy says, so Held tells whether the cluster
// enforces it. The clients mode is probed between Kafka pods only, where it
// cuts nothing. Other Kafka pods without an IP are skipped; the victim must
// have one. Probe changes nothing; the scripts need bash and timeout in the
// pods (the apache/kafka image has both).
func (f *Partition) Probe(ctx context.Context) ([]Reach, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	if f.Client == nil || f.Exec == nil {
		return nil, fmt.Errorf("chaos: probe %s: scope has no client or exec", f.Name())
	}
	pods, err := f.pods(ctx)
	if err != nil {
		return nil, err
	}
	victim := pods[f.Pod]
	if victim.Status.PodIP == "" {
		return nil, fmt.Errorf("chaos: probe %s: pod %s has no IP", f.Name(), f.Pod)
	}
	var others []*corev1.Pod
	for _, name := range f.others() {
		if p := pods[name]; p != nil && p.Status.PodIP != "" {
			others = append(others, p)
		}
	}
	if len(others) == 0 {
		return nil, fmt.Errorf("chaos: probe %s: no other Kafka pod of %v has an IP", f.Name(), f.KafkaPods)
	}
	out, err := f.probeFrom(ctx, victim, others, f.allowed)
	if err != nil {
		return nil, err
	}
	back, err := f.probeFrom(ctx, others[0], []*corev1.Pod{victim}, f.allowed)
	if err != nil {
		return nil, err
	}
	out = append(out, back...)
	if f.Mode == PartitionClients && len(f.Clients) > 0 {
		// From a client: the victim cut, another Kafka pod still reached.
		fromClient, err := f.probeClients(ctx, victim, others[0])
		if err != nil {
			return nil, err
		}
		out = append(out, fromClient...)
	}
	return out, nil
}

// probeClients probes from the first of f.Clients that has an IP, on
// BrokerPort: the victim must be closed, other open.
func (f *Partition) probeClients(ctx context.Context, victim, other *corev1.Pod) ([]Reach, error) {
	for _, name := range f.Clients {
		c, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil || c.Status.PodIP == "" {
			continue
		}
		return f.probeFrom(ctx, c, []*corev1.Pod{victim, other}, func(to *corev1.Pod, port int32) bool {
			return to.Name != victim.Name
		}, f.brokerPort())
	}
	return nil, fmt.Errorf("chaos: probe %s: none of the client pods %v is running with an IP", f.Name(), f.Clients)
}

// probeFrom runs probeScript in pod from against the declared ports of the
// pods to (BrokerPort and ControllerPort, or ports), with from's own
// control first; want says which connections the mode allows. It returns
// nothing, without an exec, when none of to declares a port.
func (f *Partition) probeFrom(ctx context.Context, from *corev1.Pod, to []*corev1.Pod, want func(to *corev1.Pod, port int32) bool, ports ...int32) ([]Reach, error) {
	if len(ports) == 0 {
		ports = []int32{f.brokerPort(), f.controllerPort()}
	}
	var rs []Reach
	for _, p := range ports {
		if declares(from, p) {
			rs = append(rs, Reach{From: from.Name, To: from.Name, Port: p, Want: true})
			break
		}
	}
	control := len(rs)
	ips := map[string]string{from.Name: from.Status.PodIP}
	for _, t := range to {
		ips[t.Name] = t.Status.PodIP
		for _, p := range ports {
			if declares(t, p) {
				rs = append(rs, Reach{From: from.Name, To: t.Name, Port: p, Want: want(t, p)})
			}
		}
	}
	if len(rs) == control {
		return nil, nil
	}
	argv := []string{"sh", "-c", probeScript, "probe"}
	for _, r := range rs {
		argv = append(argv, ips[r.To], strconv.Itoa(int(r.Port)))
	}
	out, err := f.Exec(ctx, f.Namespace, from.Name, probeContainer(from, ports), argv)
	if err != nil {
		return nil, fmt.Errorf("chaos: probe %s from pod %s: %w", f.Name(), from.Name, err)
	}
	got, err := parseProbe(out)
	if err != nil {
		return nil, fmt.Errorf("chaos: probe %s from pod %s: %w", f.Name(), from.Name, err)
	}
	for i, r := range rs {
		key := ips[r.To] + " " + strconv.Itoa(int(r.Port))
		open, ok := got[key]
		if !ok {
			return nil, fmt.Errorf("chaos: probe %s from pod %s: no answer for %s (pod %s) in %q", f.Name(), from.Name, key, r.To, out)
		}
		rs[i].Got = open
	}
	return rs, nil
}

// parseProbe reads probeScript's lines into "IP PORT" -> open.
func parseProbe(out string) (map[string]bool, error) {
	got := map[string]bool{}
	for line := range strings.Lines(out) {
		fs := strings.Fields(line)
		if len(fs) == 0 {
			continue
		}
		if len(fs) != 3 || (fs[2] != "open" && fs[2] != "closed") {
			return nil, fmt.Errorf("unexpected probe output line %q", strings.TrimSpace(line))
		}
		got[fs[0]+" "+fs[1]] = fs[2] == "open"
	}
	return got, nil
}

// declares says whether a container of pod declares TCP port port.
func declares(pod *corev1.Pod, port int32) bool {
	return slices.ContainsFunc(pod.Spec.Containers, func(c corev1.Container) bool { return listensOn(c, port) })
}

// listensOn says whether container c declares TCP port port.
func listensOn(c corev1.Container, port int32) bool {
	return slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool {
		return p.ContainerPort == port && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP)
	})
}

// probeContainer is the container Probe execs in: the first that declares
// one of ports, else the pod's first.
func probeContainer(pod *corev1.Pod, ports []int32) string {
	for _, c := range pod.Spec.Containers {
		if slices.ContainsFunc(ports, func(p int32) bool { return listensOn(c, p) }) {
			return c.Name
		}
	}
	if len(pod.Spec.Containers) == 0 {
		return ""
	}
	return pod.Spec.Containers[0].Name
}

// Held returns nil when every connection of rs went as the partition
// wants, else an error that names each that did not: one the partition
// cuts that connected (the cluster may not enforce NetworkPolicy), one it
// allows that did not, and a pod that could not reach itself (that pod's
// probe tells nothing). Nothing probed is an error too.
func Held(rs []Reach) error {
	if len(rs) == 0 {
		return errors.New("chaos: the partition was not probed: no connection was tried (do the Kafka pods declare the ports as containerPorts?)")
	}
	var bad []string
	for _, r := range rs {
		switch {
		case r.Got == r.Want:
			continue
		case r.From == r.To:
			bad = append(bad, fmt.Sprintf("%s could not reach its own IP on port %d, so its probe tells nothing (does it listen there? can it run bash's /dev/tcp?)", r.From, r.Port))
		case r.Got:
			bad = append(bad, fmt.Sprintf("%s reached %s on port %d, which the partition cuts: does the cluster enforce NetworkPolicy?", r.From, r.To, r.Port))
		default:
			bad = append(bad, fmt.Sprintf("%s could not reach %s on port %d, which the partition allows", r.From, r.To, r.Port))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("chaos: the partition does not hold: %s", strings.Join(bad, "; "))
	}
	return nil
}
