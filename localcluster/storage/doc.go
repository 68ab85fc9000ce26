// Package storage is the local cluster's dynamic provisioner: a default
// StorageClass whose PersistentVolumes are directories under the cluster's
// state dir, and that outlive their pods as on a real cluster.
//
// It is built on sigs.k8s.io/sig-storage-lib-external-provisioner: the
// library's ProvisionController watches claims, volumes and classes, calls
// Provisioner.Provision for each claim that kube-controller-manager has
// handed to this provisioner (names the PV "pvc-<claim UID>", sets its
// claimRef and creates it) and Provisioner.Delete for each released volume
// with reclaim policy Delete (then deletes the PV), retries failures with
// backoff and records them as Events on the claim or volume. It runs without
// leader election: there is one node agent per cluster.
package storage
