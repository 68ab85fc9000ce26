// Package storage is the local cluster's dynamic provisioner: a default
// StorageClass whose PersistentVolumes are directories under the cluster's
// state dir, and that outlive their pods as on a real cluster.
package storage
