package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ClassName is the default StorageClass the provisioner serves.
const ClassName = "kafkachaos-local"

// provisionerName is the StorageClass's provisioner field.
const provisionerName = "kafkachaos.io/local-dir"

// syncEvery is how often the provisioner looks for claims and released
// volumes.
const syncEvery = 500 * time.Millisecond

// Provisioner creates a PersistentVolume (a directory) for each pending
// claim of its class, and deletes released volumes whose reclaim policy is
// Delete.
type Provisioner struct {
	Client kubernetes.Interface
	// Dir holds one directory per volume.
	Dir string
}

// Run installs the default StorageClass and provisions until ctx ends.
func (p *Provisioner) Run(ctx context.Context) error {
	if err := p.ensureClass(ctx); err != nil {
		return err
	}
	t := time.NewTicker(syncEvery)
	defer t.Stop()
	for {
		// Errors are retried on the next tick; the API server may be busy.
		_ = p.sync(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (p *Provisioner) ensureClass(ctx context.Context) error {
	reclaim := corev1.PersistentVolumeReclaimDelete
	binding := storagev1.VolumeBindingImmediate
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        ClassName,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:       provisionerName,
		ReclaimPolicy:     &reclaim,
		VolumeBindingMode: &binding,
	}
	_, err := p.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("storage: create storage class: %w", err)
	}
	return nil
}

// sync provisions pending claims and deletes released volumes.
func (p *Provisioner) sync(ctx context.Context) error {
	claims, err := p.Client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var errs []error
	for i := range claims.Items {
		c := &claims.Items[i]
		if c.Spec.VolumeName != "" || c.Status.Phase != corev1.ClaimPending || c.DeletionTimestamp != nil {
			continue
		}
		if c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != ClassName {
			continue
		}
		errs = append(errs, p.provision(ctx, c))
	}
	pvs, err := p.Client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range pvs.Items {
		pv := &pvs.Items[i]
		if pv.Spec.StorageClassName == ClassName && pv.Status.Phase == corev1.VolumeReleased &&
			pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete {
			errs = append(errs, p.delete(ctx, pv))
		}
	}
	return errors.Join(errs...)
}

// VolumeName is the PersistentVolume name for a claim.
func VolumeName(c *corev1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }

func (p *Provisioner) provision(ctx context.Context, c *corev1.PersistentVolumeClaim) error {
	name := VolumeName(c)
	dir := filepath.Join(p.Dir, name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("storage: %s: %w", name, err)
	}
	size := c.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.IsZero() {
		size = resource.MustParse("1Gi")
	}
	modes := c.Spec.AccessModes
	if len(modes) == 0 {
		modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	hostType := corev1.HostPathDirectory
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": provisionerName},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   modes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              ClassName,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: &hostType},
			},
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: c.Namespace, Name: c.Name, UID: c.UID, ResourceVersion: c.ResourceVersion,
			},
		},
	}
	_, err := p.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("storage: create %s: %w", name, err)
	}
	return nil
}

func (p *Provisioner) delete(ctx context.Context, pv *corev1.PersistentVolume) error {
	if hp := pv.Spec.HostPath; hp != nil && filepath.Dir(hp.Path) == filepath.Clean(p.Dir) {
		if err := os.RemoveAll(hp.Path); err != nil {
			return fmt.Errorf("storage: delete %s: %w", pv.Name, err)
		}
	}
	err := p.Client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("storage: delete %s: %w", pv.Name, err)
	}
	return nil
}
