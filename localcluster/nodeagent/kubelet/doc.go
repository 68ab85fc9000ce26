// Package kubelet is the local cluster's node agent: virtual-kubelet nodes whose pods run as host processes, each on a loopback IP of its own.
package kubelet
