package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// ClassName is the default StorageClass the provisioner serves.
const ClassName = "kafkachaos-local"

// provisionerName is the StorageClass's provisioner field, and the name the
// library's controller answers to.
const provisionerName = "kafkachaos.io/local-dir"

// defaultSize is a volume's capacity when its claim requests none.
const defaultSize = "1Gi"

// retryMin and retryMax bound the per-item exponential backoff after a
// failed Provision, Delete or PV save. The library's defaults (15s to
// 1000s, giving up after 15 failures) suit a cloud disk, not a directory.
const (
	retryMin = 500 * time.Millisecond
	retryMax = 30 * time.Second
)

// Provisioner creates a PersistentVolume (a directory) for each pending
// claim of its class, and deletes released volumes whose reclaim policy is
// Delete. It implements the library's controller.Provisioner; Run drives it
// with the library's ProvisionController.
type Provisioner struct {
	Client kubernetes.Interface
	// Dir holds one directory per volume.
	Dir string
}

var _ controller.Provisioner = (*Provisioner)(nil)

// Run installs the default StorageClass and provisions until ctx ends. It
// returns nil once ctx ends and the controller's workers have stopped.
func (p *Provisioner) Run(ctx context.Context) error {
	if p.Client == nil {
		return errors.New("storage: provisioner has no client")
	}
	if p.Dir == "" {
		return errors.New("storage: provisioner has no volume dir")
	}
	if err := p.ensureClass(ctx); err != nil {
		return err
	}
	// The event broadcaster and informers the controller starts stop with ctx.
	ctrl := controller.NewProvisionController(ctx, p.Client, provisionerName, p,
		// One node agent per cluster: no Lease to take, no extra RBAC.
		controller.LeaderElection(false),
		// Retry until the claim or volume goes away; each failed attempt
		// is a Warning Event on the claim (ProvisioningFailed) or the PV
		// (VolumeFailedDelete).
		controller.FailedProvisionThreshold(0),
		controller.FailedDeleteThreshold(0),
		controller.RateLimiter(newRateLimiter()),
		// Save PVs in the background, retrying without deleting the
		// directory if the API server is briefly unavailable.
		controller.CreateProvisionedPVLimiter(newRateLimiter()),
	)
	var workers sync.WaitGroup
	ctrl.ControllerWaitGroup(&workers)
	ctrl.Run(ctx) // returns when ctx ends
	workers.Wait()
	return nil
}

// newRateLimiter is the backoff for one work queue.
func newRateLimiter() workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[string](retryMin, retryMax)
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

// VolumeName is the PersistentVolume name for a claim: the name the library
// gives ProvisionOptions.PVName.
func VolumeName(c *corev1.PersistentVolumeClaim) string { return "pvc-" + string(c.UID) }

// Provision creates the directory Dir/<PV name> and returns its PV: a
// hostPath volume of type Directory with the claim's size (1Gi if none) and
// access modes (ReadWriteOnce if none). The library fills in the claimRef,
// the provisioned-by annotation and the class, creates the PV, and turns an
// error into a ProvisioningFailed Event on the claim.
func (p *Provisioner) Provision(_ context.Context, opts controller.ProvisionOptions) (*corev1.PersistentVolume, controller.ProvisioningState, error) {
	claim := opts.PVC
	if claim == nil {
		return nil, controller.ProvisioningFinished, errors.New("storage: provision: no claim")
	}
	dir, err := p.volumeDir(opts.PVName)
	if err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, controller.ProvisioningFinished, fmt.Errorf("storage: volume %s for claim %s/%s: %w", opts.PVName, claim.Namespace, claim.Name, err)
	}
	size := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.IsZero() {
		size = resource.MustParse(defaultSize)
	}
	modes := claim.Spec.AccessModes
	if len(modes) == 0 {
		modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	if sc := opts.StorageClass; sc != nil && sc.ReclaimPolicy != nil {
		reclaim = *sc.ReclaimPolicy
	}
	hostType := corev1.HostPathDirectory
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: opts.PVName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   modes,
			PersistentVolumeReclaimPolicy: reclaim,
			StorageClassName:              ClassName,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: &hostType},
			},
		},
	}
	return pv, controller.ProvisioningFinished, nil
}

// Delete removes a released volume's directory, but only if it is
// Dir/<PV name>: a PV whose hostPath is anywhere else (or is not a hostPath)
// is left alone on disk, and the library then deletes the PV object.
func (p *Provisioner) Delete(ctx context.Context, pv *corev1.PersistentVolume) error {
	dir, ok := p.ownedDir(pv)
	if !ok {
		klog.FromContext(ctx).Info("storage: volume's path is not ours, leaving it on disk",
			"PV", pv.Name, "dir", p.Dir)
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("storage: delete volume %s: %w", pv.Name, err)
	}
	return nil
}

// volumeDir is the directory for the PV called name: Dir/name, refusing any
// name that is not a single path element.
func (p *Provisioner) volumeDir(name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') ||
		strings.ContainsRune(name, filepath.Separator) {
		return "", fmt.Errorf("storage: invalid volume name %q", name)
	}
	return filepath.Join(p.Dir, name), nil
}

// ownedDir returns pv's hostPath and true if it is exactly Dir/<PV name>
// as Provision writes it (clean: no "..", no doubled or trailing
// separators).
func (p *Provisioner) ownedDir(pv *corev1.PersistentVolume) (string, bool) {
	if p.Dir == "" || pv.Spec.HostPath == nil {
		return "", false
	}
	want, err := p.volumeDir(pv.Name)
	if err != nil || pv.Spec.HostPath.Path != want {
		return "", false
	}
	return want, true
}
