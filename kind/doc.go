// Package kind is the kind target: it brings up a kind cluster (Kubernetes
// nodes as Docker containers) for the suites and takes it down again.
//
// A Provider first checks its prerequisites: the docker client on $PATH, a
// Docker engine that answers `docker info` within a short timeout, the kind
// program, and the agent image in the engine. When one is missing it
// returns ErrNoDocker, ErrNoKind or ErrNoImage, saying what it tried and
// what to do instead (the local target, `make chaos`, needs no Docker), and
// it has changed nothing.
//
// Up then creates the cluster from Config (one control-plane node and three
// workers in zones zone-a, zone-b and zone-c, committed as
// kind-config.yaml) through sigs.k8s.io/e2e-framework's support/kind, loads
// the agent image into the nodes, applies a Kafka layout of the manifests
// package (whose Namespace opts in to disruption), waits until its pods are
// Ready, and writes the cluster's kubeconfig to a known path. Down deletes
// the cluster and that kubeconfig.
package kind
