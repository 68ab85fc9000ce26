package serviceproxy

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// backend answers each line with its name and the line.
func backend(t *testing.T, name string) (string, int32) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					fmt.Fprintf(c, "%s:%s\n", name, sc.Text())
				}
			}()
		}
	}()
	a := ln.Addr().(*net.TCPAddr)
	return a.IP.String(), int32(a.Port)
}

// pod is a Running pod of the Service at ip, whose container port
// "client" is port.
func pod(name, ip string, port int32, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": "kafka"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "kafka", Ports: []corev1.ContainerPort{{Name: "client", ContainerPort: port}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

// freePort returns a port free on ip.
func freePort(t *testing.T, ip string) int32 {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return int32(ln.Addr().(*net.TCPAddr).Port)
}

// ask connects to addr, sends a line and returns the answer, or the error.
func ask(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprintln(c, "hello"); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

// waitAnswer polls addr until it answers want, and returns what it last
// saw otherwise.
func waitAnswer(t *testing.T, addr, want string) {
	t.Helper()
	var got string
	var gotErr error
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		got, gotErr = ask(addr)
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("%s answered %q (%v), want %q", addr, got, gotErr, want)
	}
}

func TestClusterIPForwardsToReadyEndpoints(t *testing.T) {
	const clusterIP = "127.96.250.7" // inside localcluster.ServiceCIDR
	port := freePort(t, clusterIP)
	addr := net.JoinHostPort(clusterIP, strconv.Itoa(int(port)))
	oneIP, onePort := backend(t, "one")
	twoIP, twoPort := backend(t, "two")
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap", Namespace: "ns"},
		Spec: corev1.ServiceSpec{ClusterIP: clusterIP, Selector: map[string]string{"app": "kafka"},
			Ports: []corev1.ServicePort{{Name: "tcp", Port: port, TargetPort: intstr.FromString("client")}}},
	}
	cs := fake.NewClientset(svc, pod("kafka-0", oneIP, onePort, true), pod("kafka-1", twoIP, twoPort, false))
	watched := watchesOf(cs, "pods", "services")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cs, t.Logf) }()

	waitAnswer(t, addr, "one:hello") // the ready endpoint, never the unready one
	watched(t)
	for range 5 {
		if got, err := ask(addr); got != "one:hello" {
			t.Fatalf("answer %q (%v), want one:hello only", got, err)
		}
	}

	// The endpoint pod is replaced: a new connection reaches the new one.
	pods := cs.CoreV1().Pods("ns")
	if err := pods.Delete(t.Context(), "kafka-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Update(t.Context(), pod("kafka-1", twoIP, twoPort, true), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAnswer(t, addr, "two:hello")

	// The Service goes: its cluster IP stops answering.
	if err := cs.CoreV1().Services("ns").Delete(t.Context(), "bootstrap", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, err := ask(addr)
		return err != nil, nil
	})
	if err != nil {
		t.Fatal("the deleted Service's cluster IP still answers")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestWanted(t *testing.T) {
	sel := map[string]string{"app": "kafka"}
	svcs := []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}, Spec: corev1.ServiceSpec{ClusterIP: "127.96.0.10", Selector: sel,
			Ports: []corev1.ServicePort{{Name: "tcp", Port: 9092}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "headless", Namespace: "ns"}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone,
			Ports: []corev1.ServicePort{{Port: 9092}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "pending", Namespace: "ns"}, Spec: corev1.ServiceSpec{Selector: sel, Ports: []corev1.ServicePort{{Port: 80}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "off-loopback", Namespace: "ns"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", Selector: sel,
			Ports: []corev1.ServicePort{{Port: 80}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default"}, Spec: corev1.ServiceSpec{ClusterIP: "127.96.0.1",
			Ports: []corev1.ServicePort{{Port: 443}}}},
	}
	got := wanted(svcs)
	want := map[servicePort]target{{"127.96.0.10", 9092}: {"ns", "a", corev1.ServicePort{Name: "tcp", Port: 9092}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("wanted %v, want %v", got, want)
	}
}

func TestTargetPort(t *testing.T) {
	p := pod("kafka-0", "127.1.0.1", 9094, true)
	tests := []struct {
		name   string
		target intstr.IntOrString
		want   int32
		ok     bool
	}{
		{"unset: the Service port", intstr.IntOrString{}, 9092, true},
		{"a number", intstr.FromInt32(19092), 19092, true},
		{"a container port's name", intstr.FromString("client"), 9094, true},
		{"a name the pod does not declare", intstr.FromString("admin"), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := targetPort(corev1.ServicePort{Port: 9092, TargetPort: tt.target}, p)
			if got != tt.want || ok != tt.ok {
				t.Errorf("targetPort = %d, %t; want %d, %t", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// watchesOf makes cs's watches of resources known; the function it returns
// waits until each has one. client-go's fake replays nothing to a watch, so
// a change made between an informer's list and its watch would be lost.
func watchesOf(cs *fake.Clientset, resources ...string) func(*testing.T) {
	var wg sync.WaitGroup
	for _, r := range resources {
		wg.Add(1)
		var once sync.Once
		cs.PrependWatchReactor(r, func(a k8stesting.Action) (bool, watch.Interface, error) {
			w, err := cs.Tracker().Watch(a.GetResource(), a.GetNamespace())
			once.Do(wg.Done)
			return true, w, err
		})
	}
	return func(t *testing.T) {
		t.Helper()
		ok := make(chan struct{})
		go func() { wg.Wait(); close(ok) }()
		select {
		case <-ok:
		case <-time.After(10 * time.Second):
			t.Fatalf("no watch of each of %v", resources)
		}
	}
}
