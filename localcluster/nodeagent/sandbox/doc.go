// Package sandbox is a pod's container on the local cluster: pod-exec enters its hostname, its own filesystem (overlays of the host's, pivot_root) and its volumes, then execs its program.
package sandbox
