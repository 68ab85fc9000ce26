package serviceproxy

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Timeouts and periods of the proxy.
const (
	dialTimeout = 5 * time.Second
	resync      = 30 * time.Second
)

// servicePort is one listener's key: a cluster IP and TCP port.
type servicePort struct {
	IP   string
	Port int32
}

// target is what a listener forwards to: a Service's port.
type target struct {
	Namespace, Service string
	Port               corev1.ServicePort
}

// same reports whether t and u forward alike (ServicePort holds pointers).
func (t target) same(u target) bool {
	return t.Namespace == u.Namespace && t.Service == u.Service && t.Port.Port == u.Port.Port && t.Port.TargetPort == u.Port.TargetPort
}

// Proxy forwards connections to Services' cluster IPs. Use Run.
type Proxy struct {
	client   kubernetes.Interface
	logf     func(format string, a ...any)
	services corelisters.ServiceLister
	pods     corelisters.PodLister

	mu        sync.Mutex
	listeners map[servicePort]*listener
	conns     map[net.Conn]struct{}
}

type listener struct {
	ln     net.Listener
	target target
}

// Run serves every Service's cluster IP until ctx ends, then closes every
// listener and every proxied connection. logf receives what went wrong
// (a port that cannot be bound, a Service without a ready endpoint).
func Run(ctx context.Context, client kubernetes.Interface, logf func(format string, a ...any)) error {
	p := &Proxy{client: client, logf: logf, listeners: map[servicePort]*listener{}, conns: map[net.Conn]struct{}{}}
	factory := informers.NewSharedInformerFactory(client, resync)
	svcs := factory.Core().V1().Services()
	pods := factory.Core().V1().Pods()
	p.services, p.pods = svcs.Lister(), pods.Lister()
	kick := make(chan struct{}, 1)
	onChange := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke(kick) },
		UpdateFunc: func(any, any) { poke(kick) },
		DeleteFunc: func(any) { poke(kick) },
	}
	if _, err := svcs.Informer().AddEventHandler(onChange); err != nil {
		return fmt.Errorf("serviceproxy: %w", err)
	}
	pods.Informer() // registered before Start
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), svcs.Informer().HasSynced, pods.Informer().HasSynced) {
		return fmt.Errorf("serviceproxy: caches never synced: %w", ctx.Err())
	}
	defer p.closeAll()
	for {
		list, err := svcs.Lister().List(labels.Everything())
		if err != nil {
			return fmt.Errorf("serviceproxy: %w", err)
		}
		p.sync(ctx, list)
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
		}
	}
}

func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// wanted returns the listeners svcs ask for: every TCP port of every
// Service with a loopback cluster IP and a selector. A cluster IP off
// loopback is never bound (the local cluster's range is inside
// 127.0.0.0/8); a Service without a selector has endpoints kept by hand,
// which the proxy does not follow, so its cluster IP refuses connections.
func wanted(svcs []*corev1.Service) map[servicePort]target {
	want := map[servicePort]target{}
	for _, s := range svcs {
		ip := net.ParseIP(s.Spec.ClusterIP)
		if ip == nil || !ip.IsLoopback() || len(s.Spec.Selector) == 0 {
			continue
		}
		for _, port := range s.Spec.Ports {
			if port.Protocol != "" && port.Protocol != corev1.ProtocolTCP {
				continue
			}
			want[servicePort{ip.String(), port.Port}] = target{s.Namespace, s.Name, port}
		}
	}
	return want
}

// sync opens the listeners svcs want and closes the others.
func (p *Proxy) sync(ctx context.Context, svcs []*corev1.Service) {
	want := wanted(svcs)
	p.mu.Lock()
	defer p.mu.Unlock()
	for sp, l := range p.listeners {
		if t, ok := want[sp]; !ok || !t.same(l.target) {
			l.ln.Close()
			delete(p.listeners, sp)
		}
	}
	for sp, t := range want {
		if _, ok := p.listeners[sp]; ok {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(sp.IP, strconv.Itoa(int(sp.Port))))
		if err != nil {
			p.logf("serviceproxy: service %s/%s port %d: %v", t.Namespace, t.Service, sp.Port, err)
			continue
		}
		l := &listener{ln: ln, target: t}
		p.listeners[sp] = l
		go p.serve(ctx, l)
	}
}

func (p *Proxy) serve(ctx context.Context, l *listener) {
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			return // closed
		}
		go p.forward(ctx, conn, l.target)
	}
}

// endpoints returns the addresses (ip:port) of t's Service's ready pods:
// the pods its selector picks, Ready (or any, with
// publishNotReadyAddresses), not terminating, with the port that the
// Service port's targetPort names. They come from the pods themselves, as
// kube-proxy's endpoints would: EndpointSlices refuse the local cluster's
// loopback pod IPs.
func (p *Proxy) endpoints(t target) ([]string, error) {
	svc, err := p.services.Services(t.Namespace).Get(t.Service)
	if err != nil {
		return nil, err
	}
	if len(svc.Spec.Selector) == 0 {
		return nil, fmt.Errorf("no selector: endpoints managed by hand are not proxied")
	}
	pods, err := p.pods.Pods(t.Namespace).List(labels.SelectorFromSet(svc.Spec.Selector))
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, pod := range pods {
		if pod.Status.PodIP == "" || pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning ||
			!svc.Spec.PublishNotReadyAddresses && !podReady(pod) {
			continue
		}
		if port, ok := targetPort(t.Port, pod); ok {
			addrs = append(addrs, net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port))))
		}
	}
	return addrs, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// targetPort resolves sp's targetPort on pod: a number, a container port's
// name, or (unset) the Service port itself.
func targetPort(sp corev1.ServicePort, pod *corev1.Pod) (int32, bool) {
	switch {
	case sp.TargetPort.Type == intstr.String && sp.TargetPort.StrVal != "":
		for _, c := range pod.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == sp.TargetPort.StrVal && (cp.Protocol == "" || cp.Protocol == corev1.ProtocolTCP) {
					return cp.ContainerPort, true
				}
			}
		}
		return 0, false
	case sp.TargetPort.IntVal != 0:
		return sp.TargetPort.IntVal, true
	default:
		return sp.Port, true
	}
}

// forward connects conn to a ready endpoint of t, trying them in random
// order, and copies both ways until both sides are done.
func (p *Proxy) forward(ctx context.Context, conn net.Conn, t target) {
	if !p.track(conn) {
		return
	}
	defer p.untrack(conn)
	addrs, err := p.endpoints(t)
	if err != nil {
		p.logf("serviceproxy: service %s/%s: %v", t.Namespace, t.Service, err)
		return
	}
	rand.Shuffle(len(addrs), func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
	var up net.Conn
	for _, a := range addrs {
		d := net.Dialer{Timeout: dialTimeout}
		if up, err = d.DialContext(ctx, "tcp", a); err == nil {
			break
		}
	}
	if up == nil {
		p.logf("serviceproxy: service %s/%s port %d: no ready endpoint answered (%d tried, last: %v)", t.Namespace, t.Service, t.Port.Port, len(addrs), err)
		return
	}
	if !p.track(up) {
		up.Close()
		return
	}
	defer p.untrack(up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, conn)
	go pipe(conn, up)
	<-done
	<-done
}

// track records c so that Run's end closes it; false once Run has ended.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	c.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

func (p *Proxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for sp, l := range p.listeners {
		l.ln.Close()
		delete(p.listeners, sp)
	}
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
