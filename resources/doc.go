// Package resources measures what a namespace's pods use while a spec
// runs: each pod's CPU time and its largest memory working set, sampled
// from the kubelets' stats summary (/stats/summary), the source
// metrics-server reads: on kind or a real cluster through the API server's
// node proxy (which needs get on nodes/proxy), on the local cluster from
// each node agent directly (LocalKubeletSummary), as the node proxy refuses
// loopback node addresses; the agent serves the summary from /proc.
package resources
