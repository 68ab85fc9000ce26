// Package resources measures what a namespace's pods use while a spec
// runs: each pod's CPU time and its largest memory working set, sampled
// from the kubelets' stats summary (/stats/summary through the API
// server's node proxy), the source metrics-server reads. It works the same
// on the local cluster, whose node agent serves that summary from /proc,
// and on kind or a real cluster, where it needs get on nodes/proxy.
package resources
