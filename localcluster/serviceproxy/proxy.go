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
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
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

// target is what a listener forwards to: a Service's port, by name.
type target struct {
	Namespace, Service, PortName string
}

// Proxy forwards connections to Services' cluster IPs. Use Run.
type Proxy struct {
	client kubernetes.Interface
	logf   func(format string, a ...any)
	slices discoverylisters.EndpointSliceLister

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
	eps := factory.Discovery().V1().EndpointSlices()
	p.slices = eps.Lister()
	kick := make(chan struct{}, 1)
	onChange := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke(kick) },
		UpdateFunc: func(any, any) { poke(kick) },
		DeleteFunc: func(any) { poke(kick) },
	}
	if _, err := svcs.Informer().AddEventHandler(onChange); err != nil {
		return fmt.Errorf("serviceproxy: %w", err)
	}
	eps.Informer() // registered before Start
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), svcs.Informer().HasSynced, eps.Informer().HasSynced) {
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
// Service with a cluster IP.
func wanted(svcs []*corev1.Service) map[servicePort]target {
	want := map[servicePort]target{}
	for _, s := range svcs {
		ip := s.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone || net.ParseIP(ip) == nil {
			continue
		}
		for _, port := range s.Spec.Ports {
			if port.Protocol != "" && port.Protocol != corev1.ProtocolTCP {
				continue
			}
			want[servicePort{ip, port.Port}] = target{s.Namespace, s.Name, port.Name}
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
		if t, ok := want[sp]; !ok || t != l.target {
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

// endpoints returns the ready addresses (ip:port) of t's Service port.
func (p *Proxy) endpoints(t target) ([]string, error) {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: t.Service})
	slices, err := p.slices.EndpointSlices(t.Namespace).List(sel)
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, s := range slices {
		for _, port := range s.Ports {
			if port.Port == nil || (port.Protocol != nil && *port.Protocol != corev1.ProtocolTCP) || ptrOr(port.Name) != t.PortName {
				continue
			}
			for _, ep := range s.Endpoints {
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || len(ep.Addresses) == 0 {
					continue
				}
				addrs = append(addrs, net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(*port.Port))))
			}
		}
	}
	return addrs, nil
}

func ptrOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
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
		p.logf("serviceproxy: service %s/%s port %q: no ready endpoint answered (%d tried, last: %v)", t.Namespace, t.Service, t.PortName, len(addrs), err)
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
