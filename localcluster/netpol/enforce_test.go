package netpol

import (
	"bufio"
	"context"
	stderrors "errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The real thing: cgroups, the nftables table and TCP on loopback. Root only.

const dialEnv = "NETPOL_TEST_DIAL"

// TestMain lets the test binary act as a pod's process: with dialEnv set
// it connects there and then, for each line on stdin, sends a byte and
// prints "ok" when the echo comes back within a second, else "timeout".
func TestMain(m *testing.M) {
	if addr := os.Getenv(dialEnv); addr != "" {
		os.Exit(dialer(addr))
	}
	os.Exit(m.Run())
}

func dialer(addr string) int {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		fmt.Println("refused")
		return 0
	}
	fmt.Println("connected")
	in := bufio.NewScanner(os.Stdin)
	buf := make([]byte, 1)
	for in.Scan() {
		_ = c.SetDeadline(time.Now().Add(time.Second))
		if _, err := c.Write([]byte{'x'}); err == nil {
			if _, err = io.ReadFull(c, buf); err == nil {
				fmt.Println("ok")
				continue
			}
		}
		fmt.Println("timeout")
	}
	return 0
}

// echoServer listens on addr and echoes.
func echoServer(t *testing.T, addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
}

// podProc is a dialer running in a pod's cgroup.
type podProc struct {
	in  io.WriteCloser
	out *bufio.Scanner
}

func startIn(t *testing.T, cg *Cgroups, pod, addr string) (*podProc, string) {
	t.Helper()
	fd, _, err := cg.Open(pod)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), dialEnv+"="+addr)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p := &podProc{in: in, out: bufio.NewScanner(out)}
	p.out.Scan()
	return p, p.out.Text()
}

// echo sends one byte over the held connection: "ok" or "timeout".
func (p *podProc) echo() string {
	fmt.Fprintln(p.in)
	p.out.Scan()
	return p.out.Text()
}

func TestEnforcedOnLoopback(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: cgroups and nftables")
	}
	tag := Tag(t.TempDir())
	cg, err := OpenCgroups(tag)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stderrors.Join(Delete(tag), RemoveAll(tag)); err != nil {
			t.Error(err)
		}
		if ok, err := Exists(tag); ok || err != nil {
			t.Errorf("table %s left on the host (err %v)", TableName(tag), err)
		}
		if _, err := os.Stat(cg.Dir); !os.IsNotExist(err) {
			t.Errorf("cgroup %s left on the host", cg.Dir)
		}
	})
	table, err := NewTable(tag, cg)
	if err != nil {
		t.Fatal(err)
	}
	if err := table.Apply(Ruleset{}); err != nil {
		t.Fatal(err)
	}
	// Two "pods": a (a client) and b (a server on two ports), and c.
	ipB := netip.MustParseAddr("127.1.250.1")
	echoServer(t, "127.1.250.1:19092")
	echoServer(t, "127.1.250.1:19093")
	mark := func(pod string) uint32 {
		fd, m, err := cg.Open(pod)
		if err != nil {
			t.Fatal(err)
		}
		syscall.Close(fd)
		return m
	}
	markA, markC := mark("a"), mark("c")
	pods := []Pod{
		{Namespace: "ns", Name: "a", Labels: map[string]string{"app": "a"}, IP: netip.MustParseAddr("127.1.250.2"), Mark: markA},
		{Namespace: "ns", Name: "b", Labels: map[string]string{"app": "b"}, IP: ipB, Mark: 0},
		{Namespace: "ns", Name: "c", Labels: map[string]string{"app": "c"}, IP: netip.MustParseAddr("127.1.250.3"), Mark: markC},
	}
	apply := func(pols ...networkingv1.NetworkPolicy) {
		t.Helper()
		rs, refused := Compile(pods, nil, pols)
		if len(refused) > 0 {
			t.Fatalf("refused: %+v", refused)
		}
		if err := table.Apply(rs); err != nil {
			t.Fatal(err)
		}
	}
	onlyFromC := networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "only-c"},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "b"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
				{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "c"}}}}}},
		}}
	aOnly19093 := networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a-egress"},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{tcp(19093)}}},
		}}

	held, got := startIn(t, cg, "a", "127.1.250.1:19092")
	if got != "connected" || held.echo() != "ok" {
		t.Fatalf("without a policy, a -> b: %s", got)
	}

	apply(onlyFromC)
	if _, got := startIn(t, cg, "a", "127.1.250.1:19092"); got != "refused" {
		t.Errorf("ingress denied: a -> b: %s, want no connection", got)
	}
	if _, got := startIn(t, cg, "c", "127.1.250.1:19092"); got != "connected" {
		t.Errorf("ingress allowed: c -> b: %s", got)
	}
	if c, err := net.DialTimeout("tcp", "127.1.250.1:19092", 2*time.Second); err != nil {
		t.Errorf("the host is always allowed: %v", err)
	} else {
		c.Close()
	}
	if got := held.echo(); got != "timeout" {
		t.Errorf("a's connection opened before the policy: %s, want it cut", got)
	}

	apply(aOnly19093)
	if _, got := startIn(t, cg, "a", "127.1.250.1:19093"); got != "connected" {
		t.Errorf("egress allowed: a -> b:19093: %s", got)
	}
	if _, got := startIn(t, cg, "a", "127.1.250.1:19092"); got != "refused" {
		t.Errorf("egress denied: a -> b:19092: %s", got)
	}

	// With no policy the held connection comes back (TCP retransmits).
	apply()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	last := ""
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		last = held.echo()
		return last == "ok", nil
	}); err != nil {
		t.Errorf("a's held connection after the policy went: last %q", last)
	}
}
