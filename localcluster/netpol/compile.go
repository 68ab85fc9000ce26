package netpol

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Pod is what the rules need to know of a running pod.
type Pod struct {
	Namespace, Name string
	Labels          map[string]string
	IP              netip.Addr
	// Mark identifies the pod's connections (the low 32 bits of its
	// cgroup's ID); 0 means the pod has no cgroup and cannot be matched.
	Mark uint32
}

// Ruleset is the compiled form of every enforced policy: which pods are
// isolated, and what each may still reach or be reached by.
type Ruleset struct {
	// Pods are every pod's address, so that an isolated pod's traffic to
	// any pod it is not allowed is dropped.
	Pods []netip.Addr
	// Egress is one entry per egress-isolated pod.
	Egress []Isolated
	// Ingress is one entry per ingress-isolated pod.
	Ingress []Isolated
}

// Isolated is one isolated pod and the flows still allowed for it.
type Isolated struct {
	Pod   string // namespace/name, for messages
	Mark  uint32 // the pod's own mark (egress)
	IP    netip.Addr
	Allow []Flow
}

// Flow is an allowed flow, seen from the isolated pod: for egress its
// destination (Peer), for ingress its source (PeerMark). A zero field
// means any.
type Flow struct {
	Peer     netip.Addr // egress: the destination pod; invalid: any
	PeerMark uint32     // ingress: the source pod's mark; 0: any source
	Port     uint16     // 0: any port
}

// Refusal is a policy the local cluster cannot enforce, and why.
type Refusal struct {
	Namespace, Name string
	Reason          string
}

// Compile turns policies into rules over pods. nsLabels holds each
// namespace's labels. A policy with a part this package does not enforce is
// refused as a whole, so it is never half applied.
func Compile(pods []Pod, nsLabels map[string]map[string]string, policies []networkingv1.NetworkPolicy) (Ruleset, []Refusal) {
	var rs Ruleset
	var refused []Refusal
	ingress := map[string]*Isolated{}
	egress := map[string]*Isolated{}
	for _, p := range pods {
		if p.IP.IsValid() {
			rs.Pods = append(rs.Pods, p.IP)
		}
	}
	for i := range policies {
		pol := &policies[i]
		if why := unsupported(pol); why != "" {
			refused = append(refused, Refusal{Namespace: pol.Namespace, Name: pol.Name, Reason: why})
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(&pol.Spec.PodSelector)
		if err != nil {
			refused = append(refused, Refusal{Namespace: pol.Namespace, Name: pol.Name, Reason: "podSelector: " + err.Error()})
			continue
		}
		in, out := policyTypes(pol)
		for _, p := range pods {
			if p.Namespace != pol.Namespace || !sel.Matches(labels.Set(p.Labels)) || !p.IP.IsValid() {
				continue
			}
			k := p.Namespace + "/" + p.Name
			if p.Mark == 0 && out {
				refused = append(refused, Refusal{Namespace: pol.Namespace, Name: pol.Name,
					Reason: "pod " + k + " has no cgroup yet: its connections cannot be told apart"})
				continue
			}
			if in {
				iso := entry(ingress, k, p)
				for _, r := range pol.Spec.Ingress {
					peers, all := peersOf(r.From, pol.Namespace, pods, nsLabels)
					iso.Allow = append(iso.Allow, flows(peers, all, portsOf(r.Ports), func(peer Pod, port uint16) (Flow, bool) {
						// a pod without a cgroup cannot be told from the host
						return Flow{PeerMark: peer.Mark, Port: port}, peer.Mark != 0
					})...)
				}
			}
			if out {
				iso := entry(egress, k, p)
				for _, r := range pol.Spec.Egress {
					peers, all := peersOf(r.To, pol.Namespace, pods, nsLabels)
					iso.Allow = append(iso.Allow, flows(peers, all, portsOf(r.Ports), func(peer Pod, port uint16) (Flow, bool) {
						return Flow{Peer: peer.IP, Port: port}, true
					})...)
				}
			}
		}
	}
	rs.Ingress, rs.Egress = sorted(ingress), sorted(egress)
	return rs, refused
}

// flows returns a rule's allowed flows, port by port: to any peer when the
// rule names none (all), else to each peer that of keeps.
func flows(peers []Pod, all bool, ports []uint16, of func(Pod, uint16) (Flow, bool)) []Flow {
	var out []Flow
	for _, port := range ports {
		if all {
			out = append(out, Flow{Port: port})
		}
		for _, peer := range peers {
			if f, ok := of(peer, port); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

func entry(m map[string]*Isolated, k string, p Pod) *Isolated {
	if m[k] == nil {
		m[k] = &Isolated{Pod: k, Mark: p.Mark, IP: p.IP}
	}
	return m[k]
}

func sorted(m map[string]*Isolated) []Isolated {
	var out []Isolated
	for _, iso := range m {
		out = append(out, *iso)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pod < out[j].Pod })
	return out
}

// policyTypes says whether the policy isolates for ingress and egress, as
// the API defaults it: Ingress always, Egress when it has egress rules.
func policyTypes(pol *networkingv1.NetworkPolicy) (in, out bool) {
	if len(pol.Spec.PolicyTypes) == 0 {
		return true, len(pol.Spec.Egress) > 0
	}
	return slices.Contains(pol.Spec.PolicyTypes, networkingv1.PolicyTypeIngress),
		slices.Contains(pol.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
}

// peersOf returns the pods a rule's peers select, or all: a rule without
// peers allows every source or destination.
func peersOf(peers []networkingv1.NetworkPolicyPeer, ns string, pods []Pod, nsLabels map[string]map[string]string) (out []Pod, all bool) {
	if len(peers) == 0 {
		return nil, true
	}
	for _, peer := range peers {
		podSel, nsSel := labels.Everything(), labels.Nothing()
		if peer.PodSelector != nil {
			podSel, _ = metav1.LabelSelectorAsSelector(peer.PodSelector)
		}
		if peer.NamespaceSelector != nil {
			nsSel, _ = metav1.LabelSelectorAsSelector(peer.NamespaceSelector)
		}
		for _, p := range pods {
			inNS := p.Namespace == ns && peer.NamespaceSelector == nil || nsSel.Matches(labels.Set(nsLabels[p.Namespace]))
			if inNS && podSel.Matches(labels.Set(p.Labels)) && p.IP.IsValid() {
				out = append(out, p)
			}
		}
	}
	return out, false
}

// portsOf returns a rule's ports; no ports means any (0).
func portsOf(ports []networkingv1.NetworkPolicyPort) []uint16 {
	if len(ports) == 0 {
		return []uint16{0}
	}
	out := make([]uint16, 0, len(ports))
	for _, p := range ports {
		if p.Port == nil {
			out = append(out, 0)
			continue
		}
		out = append(out, uint16(p.Port.IntVal))
	}
	return out
}

// unsupported names the first part of a policy this package does not
// enforce, or returns "".
func unsupported(pol *networkingv1.NetworkPolicy) string {
	check := func(dir string, peers []networkingv1.NetworkPolicyPeer, ports []networkingv1.NetworkPolicyPort) string {
		for _, p := range peers {
			if p.IPBlock != nil {
				return dir + ": ipBlock peers are not enforced on the local cluster"
			}
			for _, s := range []*metav1.LabelSelector{p.PodSelector, p.NamespaceSelector} {
				if _, err := metav1.LabelSelectorAsSelector(s); err != nil {
					return dir + ": " + err.Error()
				}
			}
		}
		for _, p := range ports {
			switch {
			case p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP:
				return fmt.Sprintf("%s: protocol %s is not enforced on the local cluster (TCP only)", dir, *p.Protocol)
			case p.EndPort != nil:
				return dir + ": port ranges (endPort) are not enforced on the local cluster"
			case p.Port != nil && p.Port.Type != 0:
				return fmt.Sprintf("%s: named port %q is not enforced on the local cluster; use the number", dir, p.Port.StrVal)
			case p.Port != nil && (p.Port.IntVal < 1 || p.Port.IntVal > 65535):
				return fmt.Sprintf("%s: port %d is out of range", dir, p.Port.IntVal)
			}
		}
		return ""
	}
	for _, r := range pol.Spec.Ingress {
		if why := check("ingress", r.From, r.Ports); why != "" {
			return why
		}
	}
	for _, r := range pol.Spec.Egress {
		if why := check("egress", r.To, r.Ports); why != "" {
			return why
		}
	}
	return ""
}
