package chaos

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// ipPod is a running Kafka pod with an IP whose container "kafka" declares
// ports; its first container is a sidecar.
func ipPod(name, ip string, ports ...int32) *corev1.Pod {
	p := testPod("kafka", name, "node-1")
	c := corev1.Container{Name: "kafka"}
	for _, port := range ports {
		c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: port})
	}
	p.Spec.Containers = []corev1.Container{{Name: "sidecar"}, c}
	p.Status.PodIP = ip
	return p
}

// probeCall is one exec of the probe script.
type probeCall struct {
	pod, container string
}

// fakeNet is the Exec of a network where open says whether pod from
// connects to ip:port. It answers the probe script's arguments in reverse
// order, as the script may, and records the calls.
func fakeNet(calls *[]probeCall, open func(from, ip, port string) bool) Exec {
	return func(_ context.Context, _, pod, container string, argv []string) (string, error) {
		if len(argv) < 4 || argv[0] != "sh" || argv[2] != probeScript {
			return "", errors.New("not the probe script: " + strings.Join(argv, " "))
		}
		*calls = append(*calls, probeCall{pod, container})
		var lines []string
		for pair := range slices.Chunk(argv[4:], 2) {
			state := "closed"
			if open(pod, pair[0], pair[1]) {
				state = "open"
			}
			lines = append([]string{pair[0] + " " + pair[1] + " " + state}, lines...)
		}
		return strings.Join(lines, "\n") + "\n", nil
	}
}

// ipOf is the IP of pod kafka-N in the tests: 10.0.0.1N.
func ipOf(pod string) string { return "10.0.0.1" + strings.TrimPrefix(pod, "kafka-") }

// allOpen is a network that enforces no policy.
func allOpen(string, string, string) bool { return true }

// onlySelf is a network that cuts everything but a pod's connections to
// itself.
func onlySelf(from, ip, _ string) bool { return ipOf(from) == ip }

func probeCluster() fakeClient {
	return newClient(allowedNS("kafka"), ipPod("kafka-0", ipOf("kafka-0"), 9092, 9093),
		ipPod("kafka-1", ipOf("kafka-1"), 9092, 9093), ipPod("kafka-2", ipOf("kafka-2"), 9092, 9093))
}

// probe runs f.Probe and checks its reaches against want (Reach.String).
func probe(t *testing.T, f *Partition, want []string) []Reach {
	t.Helper()
	rs, err := f.Probe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.String())
	}
	if want != nil && !slices.Equal(got, want) {
		t.Errorf("reaches\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	return rs
}

func TestPartitionProbe(t *testing.T) {
	cs := probeCluster()
	var calls []probeCall
	f := partitionOf(Scope{Client: cs, Namespace: "kafka"}, PartitionIsolate)
	f.Exec = fakeNet(&calls, onlySelf)
	rs := probe(t, f, []string{
		"kafka-1 -> kafka-1:9092 open (want open)",
		"kafka-1 -> kafka-0:9092 closed (want closed)",
		"kafka-1 -> kafka-0:9093 closed (want closed)",
		"kafka-1 -> kafka-2:9092 closed (want closed)",
		"kafka-1 -> kafka-2:9093 closed (want closed)",
		"kafka-0 -> kafka-0:9092 open (want open)",
		"kafka-0 -> kafka-1:9092 closed (want closed)",
		"kafka-0 -> kafka-1:9093 closed (want closed)",
	})
	if want := []probeCall{{"kafka-1", "kafka"}, {"kafka-0", "kafka"}}; !slices.Equal(calls, want) {
		t.Errorf("exec calls %+v, want %+v (the container that declares the ports)", calls, want)
	}
	if err := Held(rs); err != nil {
		t.Errorf("Held = %v", err)
	}
	if m := mutations(cs); len(m) > 0 {
		t.Errorf("Probe changed something: %q", m)
	}
}

// Want comes from the mode; on a network that enforces nothing, Held
// names every connection the mode cuts.
func TestPartitionProbeWant(t *testing.T) {
	tests := []struct {
		mode             PartitionMode
		broker, ctrl     bool // Want between Kafka pods on 9092 and 9093
		wantHeldMessages int
	}{
		{mode: PartitionIsolate, wantHeldMessages: 6},
		{mode: PartitionPeersOnly, ctrl: true, wantHeldMessages: 3},
		{mode: PartitionController, broker: true, wantHeldMessages: 3},
		{mode: PartitionClients, broker: true, ctrl: true},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			var calls []probeCall
			f := partitionOf(Scope{Client: probeCluster(), Namespace: "kafka"}, tt.mode)
			f.Exec = fakeNet(&calls, allOpen)
			rs := probe(t, f, nil)
			for _, r := range rs {
				want := r.From == r.To || (r.Port == 9092 && tt.broker) || (r.Port == 9093 && tt.ctrl)
				if r.Want != want || !r.Got {
					t.Errorf("%s, want Want %t", r, want)
				}
			}
			err := Held(rs)
			if n := strings.Count(errString(err), "does the cluster enforce NetworkPolicy?"); n != tt.wantHeldMessages {
				t.Errorf("Held = %v: %d connections named, want %d", err, n, tt.wantHeldMessages)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Separate controllers: a broker declares 9092 only, a controller 9093
// only, so each is probed on its own port.
func TestPartitionProbeDeclaredPorts(t *testing.T) {
	cs := newClient(allowedNS("kafka"), ipPod("kafka-0", ipOf("kafka-0"), 9093), ipPod("kafka-1", ipOf("kafka-1"), 9093),
		ipPod("kafka-2", ipOf("kafka-2"), 9092), testPod("kafka", "kafka-3", "node-1"))
	var calls []probeCall
	f := &Partition{Scope: Scope{Client: cs, Namespace: "kafka"}, Mode: PartitionController, Pod: "kafka-0",
		KafkaPods: []string{"kafka-0", "kafka-1", "kafka-2", "kafka-3"}, Exec: fakeNet(&calls, onlySelf)}
	rs := probe(t, f, []string{ // kafka-3 has no IP: skipped
		"kafka-0 -> kafka-0:9093 open (want open)",
		"kafka-0 -> kafka-1:9093 closed (want closed)",
		"kafka-0 -> kafka-2:9092 closed (want open)",
		"kafka-1 -> kafka-1:9093 open (want open)",
		"kafka-1 -> kafka-0:9093 closed (want closed)",
	})
	if err := Held(rs); err == nil || !strings.Contains(err.Error(), "kafka-0 could not reach kafka-2 on port 9092, which the partition allows") {
		t.Errorf("Held = %v", err)
	}
}

func TestPartitionProbeErrors(t *testing.T) {
	noIP := ipPod("kafka-1", "", 9092)
	answer := func(out string, err error) Exec {
		return func(context.Context, string, string, string, []string) (string, error) { return out, err }
	}
	tests := []struct {
		name     string
		victim   *corev1.Pod
		exec     Exec
		wantSays string
	}{
		{name: "no exec", wantSays: "no client or exec"},
		{name: "victim without IP", victim: noIP, exec: refuseExec, wantSays: "pod kafka-1 has no IP"},
		{name: "exec fails", exec: answer("", errors.New("exit 3: no bash")), wantSays: "from pod kafka-1: exit 3: no bash"},
		{name: "garbage", exec: answer("10.0.0.10 9092 maybe\n", nil), wantSays: `unexpected probe output line "10.0.0.10 9092 maybe"`},
		{name: "an answer missing", exec: answer("10.0.0.11 9092 open\n", nil), wantSays: "no answer for 10.0.0.10 9092 (pod kafka-0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			victim := tt.victim
			if victim == nil {
				victim = ipPod("kafka-1", ipOf("kafka-1"), 9092)
			}
			cs := newClient(allowedNS("kafka"), ipPod("kafka-0", ipOf("kafka-0"), 9092), victim)
			f := &Partition{Scope: Scope{Client: cs, Namespace: "kafka"}, Mode: PartitionIsolate, Pod: "kafka-1",
				KafkaPods: []string{"kafka-0", "kafka-1"}, Exec: tt.exec}
			rs, err := f.Probe(t.Context())
			if err == nil || !strings.Contains(err.Error(), tt.wantSays) {
				t.Errorf("Probe = %v, %v; want an error saying %q", rs, err, tt.wantSays)
			}
		})
	}
}

func TestHeld(t *testing.T) {
	tests := []struct {
		name string
		rs   []Reach
		want []string // in the error; none: Held is nil
	}{
		{name: "holds", rs: []Reach{{From: "a", To: "a", Port: 9092, Want: true, Got: true}, {From: "a", To: "b", Port: 9092}, {From: "a", To: "b", Port: 9093, Want: true, Got: true}}},
		{name: "nothing probed", want: []string{"not probed", "containerPorts"}},
		{name: "not enforced", rs: []Reach{{From: "a", To: "b", Port: 9092, Got: true}, {From: "b", To: "a", Port: 9093, Got: true}},
			want: []string{"a reached b on port 9092, which the partition cuts: does the cluster enforce NetworkPolicy?", "; b reached a on port 9093"}},
		{name: "cut too much", rs: []Reach{{From: "a", To: "b", Port: 9093, Want: true}},
			want: []string{"a could not reach b on port 9093, which the partition allows"}},
		{name: "the probe cannot tell", rs: []Reach{{From: "a", To: "a", Port: 9092, Want: true}, {From: "a", To: "b", Port: 9092}},
			want: []string{"a could not reach its own IP on port 9092, so its probe tells nothing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Held(tt.rs)
			if (err != nil) != (len(tt.want) > 0) {
				t.Fatalf("Held = %v, want an error %t", err, len(tt.want) > 0)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Held = %q, lacks %q", err, w)
				}
			}
		})
	}
}

// In the clients mode the cut shows from a client pod: the victim closed,
// another Kafka pod open. A network that lets the client through fails Held.
func TestPartitionProbeFromClients(t *testing.T) {
	agent := ipPod("agent-0", "10.0.0.50")
	agent.Labels = map[string]string{"app.kubernetes.io/name": "kafkachaos-agent"}
	agent.Spec.Containers = []corev1.Container{{Name: "agent"}}
	victimCut := func(from, ip, _ string) bool { return !(from == "agent-0" && ip == ipOf("kafka-1")) }
	for _, tt := range []struct {
		name string
		net  func(from, ip, port string) bool
		held bool
	}{
		{"enforced", victimCut, true},
		{"not enforced", allOpen, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := newClient(allowedNS("kafka"), ipPod("kafka-0", ipOf("kafka-0"), 9092, 9093),
				ipPod("kafka-1", ipOf("kafka-1"), 9092, 9093), ipPod("kafka-2", ipOf("kafka-2"), 9092, 9093), agent)
			var calls []probeCall
			f := partitionOf(Scope{Client: cs, Namespace: "kafka"}, PartitionClients)
			f.Exec, f.Clients = fakeNet(&calls, tt.net), []string{"agent-0"}
			rs, err := f.Probe(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var fromAgent []string
			for _, r := range rs {
				if r.From == "agent-0" {
					fromAgent = append(fromAgent, r.String())
				}
			}
			want := []string{"agent-0 -> kafka-1:9092 " + map[bool]string{true: "closed", false: "open"}[tt.held] + " (want closed)",
				"agent-0 -> kafka-0:9092 open (want open)"}
			if !slices.Equal(fromAgent, want) {
				t.Errorf("from the client: %q, want %q", fromAgent, want)
			}
			if err := Held(rs); (err == nil) != tt.held {
				t.Errorf("Held = %v, want held %t", err, tt.held)
			}
		})
	}
}
