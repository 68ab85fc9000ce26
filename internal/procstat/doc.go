// Package procstat reads a process group's CPU time and resident memory from
// /proc, for the node agent's kubelet stats of pods run as host processes.
package procstat
