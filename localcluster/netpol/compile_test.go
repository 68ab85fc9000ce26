package netpol

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var (
	kafka0 = Pod{Namespace: "kafka", Name: "kafka-0", Labels: map[string]string{"app": "kafka", "pod": "kafka-0"}, IP: netip.MustParseAddr("127.1.0.1"), Mark: 10}
	kafka1 = Pod{Namespace: "kafka", Name: "kafka-1", Labels: map[string]string{"app": "kafka", "pod": "kafka-1"}, IP: netip.MustParseAddr("127.1.0.2"), Mark: 11}
	client = Pod{Namespace: "kafka", Name: "load-0", Labels: map[string]string{"app": "load"}, IP: netip.MustParseAddr("127.1.0.3"), Mark: 12}
	other  = Pod{Namespace: "apps", Name: "web", Labels: map[string]string{"app": "web"}, IP: netip.MustParseAddr("127.1.0.4"), Mark: 13}
	nsLbls = map[string]map[string]string{"kafka": {"kubernetes.io/metadata.name": "kafka"}, "apps": {"kubernetes.io/metadata.name": "apps"}}
)

func policy(name string, sel map[string]string, types []networkingv1.PolicyType, in []networkingv1.NetworkPolicyIngressRule, out []networkingv1.NetworkPolicyEgressRule) networkingv1.NetworkPolicy {
	return networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: name},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: sel},
			PolicyTypes: types, Ingress: in, Egress: out},
	}
}

func tcp(n int32) networkingv1.NetworkPolicyPort {
	p := corev1.ProtocolTCP
	v := intstr.FromInt32(n)
	return networkingv1.NetworkPolicyPort{Protocol: &p, Port: &v}
}

func TestCompile(t *testing.T) {
	pods := []Pod{kafka0, kafka1, client, other}
	ingress := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
	both := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	notKafka := []networkingv1.NetworkPolicyPeer{
		{PodSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kafka"}}}}},
		{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kafka"}}}}},
	}
	tests := []struct {
		name    string
		pol     networkingv1.NetworkPolicy
		want    Ruleset
		refused string
	}{
		{
			name: "deny all ingress",
			pol:  policy("deny", map[string]string{"pod": "kafka-0"}, ingress, nil, nil),
			want: Ruleset{Ingress: []Isolated{{Pod: "kafka/kafka-0", Mark: 10, IP: kafka0.IP}}},
		},
		{
			name: "isolate: ingress and egress to non-Kafka pods only, other namespaces included",
			pol: policy("isolate", map[string]string{"pod": "kafka-0"}, both,
				[]networkingv1.NetworkPolicyIngressRule{{From: notKafka}},
				[]networkingv1.NetworkPolicyEgressRule{{To: notKafka}}),
			want: Ruleset{
				Ingress: []Isolated{{Pod: "kafka/kafka-0", Mark: 10, IP: kafka0.IP, Allow: []Flow{{PeerMark: 12}, {PeerMark: 13}}}},
				Egress:  []Isolated{{Pod: "kafka/kafka-0", Mark: 10, IP: kafka0.IP, Allow: []Flow{{Peer: client.IP}, {Peer: other.IP}}}},
			},
		},
		{
			name: "peers-only: any peer on the controller port",
			pol: policy("peers-only", map[string]string{"pod": "kafka-0"}, both,
				[]networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{tcp(9093)}}},
				[]networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{tcp(9093)}}}),
			want: Ruleset{
				Ingress: []Isolated{{Pod: "kafka/kafka-0", Mark: 10, IP: kafka0.IP, Allow: []Flow{{Port: 9093}}}},
				Egress:  []Isolated{{Pod: "kafka/kafka-0", Mark: 10, IP: kafka0.IP, Allow: []Flow{{Port: 9093}}}},
			},
		},
		{
			name: "no policy types: ingress only without egress rules",
			pol: policy("clients", map[string]string{"app": "kafka"}, nil,
				[]networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "kafka"}}}}}}, nil),
			want: Ruleset{Ingress: []Isolated{
				{Pod: "kafka/kafka-0", Mark: 10, IP: kafka0.IP, Allow: []Flow{{PeerMark: 10}, {PeerMark: 11}}},
				{Pod: "kafka/kafka-1", Mark: 11, IP: kafka1.IP, Allow: []Flow{{PeerMark: 10}, {PeerMark: 11}}},
			}},
		},
		{
			name:    "ipBlock is refused",
			pol:     policy("cidr", nil, ingress, []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "127.0.0.0/8"}}}}}, nil),
			refused: "ipBlock",
		},
		{
			name: "UDP is refused",
			pol: func() networkingv1.NetworkPolicy {
				p := tcp(53)
				udp := corev1.ProtocolUDP
				p.Protocol = &udp
				return policy("dns", nil, ingress, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{p}}}, nil)
			}(),
			refused: "protocol UDP",
		},
		{
			name: "a named port is refused",
			pol: func() networkingv1.NetworkPolicy {
				p := tcp(0)
				named := intstr.FromString("broker")
				p.Port = &named
				return policy("named", nil, ingress, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{p}}}, nil)
			}(),
			refused: `named port "broker"`,
		},
		{
			name: "a port range is refused",
			pol: func() networkingv1.NetworkPolicy {
				p := tcp(9092)
				end := int32(9093)
				p.EndPort = &end
				return policy("range", nil, nil, nil, []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{p}}})
			}(),
			refused: "endPort",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, refused := Compile(pods, nsLbls, []networkingv1.NetworkPolicy{tt.pol})
			if tt.refused != "" {
				if len(refused) != 1 || !strings.Contains(refused[0].Reason, tt.refused) {
					t.Fatalf("refused = %+v, want one naming %q", refused, tt.refused)
				}
				if len(got.Ingress)+len(got.Egress) != 0 {
					t.Fatalf("a refused policy was half applied: %+v", got)
				}
				return
			}
			if len(refused) != 0 {
				t.Fatalf("refused = %+v", refused)
			}
			tt.want.Pods = []netip.Addr{kafka0.IP, kafka1.IP, client.IP, other.IP}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Compile =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}
