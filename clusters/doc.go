// Package clusters is how kafkachaos reaches the Kubernetes cluster of a
// target: one Provider per kind of target (the embedded local cluster,
// kind, an existing cluster), each with Up (ready, and its admin's REST
// config) and Down (undo what Up created), in the spirit of
// e2e-framework's E2EClusterProvider; and the one place a kubeconfig is
// loaded (LoadRESTConfig).
package clusters
