// Package procstat reads processes' CPU time and resident memory from
// /proc: a process group's, for the node agent's kubelet stats of pods run
// as host processes, and one process's, for the soak's watch of the suite.
package procstat
