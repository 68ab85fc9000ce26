// Package nodeagent is the local cluster's node agent as the rest of kafkachaos sees it: its image, its pods' env, its name table.
//
// The agent itself is the kafkachaos-node binary, built from the
// subpackages that only it imports: kubelet (the virtual-kubelet
// provider), sandbox (a container's namespaces and filesystem) and
// launcher (the images' launchers).
package nodeagent
