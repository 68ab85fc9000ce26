// Package serviceproxy makes the local cluster's Service cluster IPs
// answer, as kube-proxy's userspace mode once did: for every TCP port of
// every Service with a cluster IP it listens on clusterIP:port and forwards
// each connection to one of the Service's ready pods, chosen at random,
// trying the others when one refuses. The pods come from the Service's
// selector, as kube-proxy's endpoints would: the API server refuses
// EndpointSlices that hold the local cluster's loopback pod IPs.
//
// Pods on the local cluster share the host's network, and cluster IPs lie
// inside 127.0.0.0/8 (localcluster.ServiceCIDR), which is all loopback: a
// listener on a cluster IP serves pods and host processes alike, and no
// address is added to the host. The proxy runs in the node agent, so a
// proxied connection reaches its endpoint from the host: NetworkPolicies
// (localcluster/netpol) judge it as host traffic, which always passes.
package serviceproxy
