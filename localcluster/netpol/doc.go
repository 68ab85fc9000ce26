// Package netpol enforces NetworkPolicy on the embedded local cluster: real
// packets are dropped by nftables on the host's loopback.
//
// Pods there are host processes with their own 127.1.x.y address, and a
// connection a pod opens leaves from 127.0.0.1, so a packet's source address
// does not say which pod sent it. Each pod's processes run in their own
// cgroup v2 instead. One static rule marks every new connection with the
// cgroup of the socket that opened it (ct mark), and the policy rules judge
// every packet of a connection, both ways, by that mark (the initiator) and
// the connection's original destination address and port (the responder).
// So a policy applied mid-connection cuts an established connection too, as
// a real partition does.
//
// Enforced: podSelector and namespaceSelector peers, numeric TCP ports, for
// ingress and egress. Not enforced, and refused with a Warning event on the
// policy: ipBlock peers, named ports, port ranges (endPort), UDP and SCTP.
// Traffic from the host (the suite's own clients, probes) is always
// allowed, as most CNIs allow a node's traffic to its pods; traffic from a
// pod to an address that is no pod is not filtered.
package netpol
