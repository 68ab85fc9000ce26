package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// newClaim is a claim of class, in namespace kafka, annotated as
// kube-controller-manager's PV controller annotates claims whose class names
// an external provisioner (the library serves only annotated claims).
func newClaim(name, class, provisioner, size string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "kafka", UID: types.UID("uid-" + name),
			Annotations: map[string]string{"volume.kubernetes.io/storage-provisioner": provisioner},
		},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &class, AccessModes: modes},
	}
	if size != "" {
		c.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	}
	return c
}

func ourClaim(name, size string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	return newClaim(name, ClassName, provisionerName, size, modes...)
}

func class(reclaim corev1.PersistentVolumeReclaimPolicy) *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta:    metav1.ObjectMeta{Name: ClassName},
		Provisioner:   provisionerName,
		ReclaimPolicy: &reclaim,
	}
}

func TestEnsureClass(t *testing.T) {
	tests := []struct {
		name     string
		existing []*storagev1.StorageClass
		want     string // the class's provisioner afterwards
	}{
		{name: "missing", want: provisionerName},
		{name: "already there is left alone", existing: []*storagev1.StorageClass{{
			ObjectMeta: metav1.ObjectMeta{Name: ClassName}, Provisioner: "example.com/other",
		}}, want: "example.com/other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset()
			for _, sc := range tt.existing {
				if _, err := cs.StorageV1().StorageClasses().Create(t.Context(), sc, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			p := &Provisioner{Client: cs, Dir: t.TempDir()}
			for range 2 { // idempotent
				if err := p.ensureClass(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			sc, err := cs.StorageV1().StorageClasses().Get(t.Context(), ClassName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if sc.Provisioner != tt.want {
				t.Errorf("provisioner %q, want %q", sc.Provisioner, tt.want)
			}
			if tt.existing != nil {
				return
			}
			if sc.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" {
				t.Errorf("class is not the default: %v", sc.Annotations)
			}
			if sc.ReclaimPolicy == nil || *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
				t.Errorf("reclaim policy %v, want Delete", sc.ReclaimPolicy)
			}
			if sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingImmediate {
				t.Errorf("binding mode %v, want Immediate", sc.VolumeBindingMode)
			}
		})
	}
}

func TestProvision(t *testing.T) {
	rwx, rox, rwo := corev1.ReadWriteMany, corev1.ReadOnlyMany, corev1.ReadWriteOnce
	tests := []struct {
		name        string
		claim       *corev1.PersistentVolumeClaim
		pvName      string // default VolumeName(claim)
		reclaim     corev1.PersistentVolumeReclaimPolicy
		dirIsFile   bool // Dir is a regular file, so no volume can be made
		wantErr     string
		wantSize    string
		wantModes   []corev1.PersistentVolumeAccessMode
		wantReclaim corev1.PersistentVolumeReclaimPolicy
	}{
		{name: "size and modes", claim: ourClaim("a", "2Gi", rwx, rox), reclaim: corev1.PersistentVolumeReclaimDelete,
			wantSize: "2Gi", wantModes: []corev1.PersistentVolumeAccessMode{rwx, rox}, wantReclaim: corev1.PersistentVolumeReclaimDelete},
		{name: "no size or modes", claim: ourClaim("b", ""), reclaim: corev1.PersistentVolumeReclaimDelete,
			wantSize: "1Gi", wantModes: []corev1.PersistentVolumeAccessMode{rwo}, wantReclaim: corev1.PersistentVolumeReclaimDelete},
		{name: "class reclaim policy", claim: ourClaim("c", "3Gi"), reclaim: corev1.PersistentVolumeReclaimRetain,
			wantSize: "3Gi", wantModes: []corev1.PersistentVolumeAccessMode{rwo}, wantReclaim: corev1.PersistentVolumeReclaimRetain},
		{name: "name not a path element", claim: ourClaim("d", ""), pvName: "../escape", wantErr: "invalid volume name"},
		{name: "directory cannot be made", claim: ourClaim("e", ""), dirIsFile: true, wantErr: "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "volumes")
			if tt.dirIsFile {
				if err := os.WriteFile(dir, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			p := &Provisioner{Client: fake.NewClientset(), Dir: dir}
			name := tt.pvName
			if name == "" {
				name = VolumeName(tt.claim)
			}
			pv, state, err := p.Provision(t.Context(), controller.ProvisionOptions{
				StorageClass: class(tt.reclaim), PVName: name, PVC: tt.claim,
			})
			if state != controller.ProvisioningFinished {
				t.Errorf("state %q, want %q", state, controller.ProvisioningFinished)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if tt.dirIsFile && !errors.Is(err, syscall.ENOTDIR) {
					t.Errorf("error %v does not wrap ENOTDIR", err)
				}
				if _, err := os.Stat(filepath.Join(root, "escape")); err == nil {
					t.Errorf("a directory was made outside Dir")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantDir := filepath.Join(dir, name)
			if fi, err := os.Stat(wantDir); err != nil || !fi.IsDir() {
				t.Fatalf("volume directory %s: %v", wantDir, err)
			}
			if pv.Name != name {
				t.Errorf("PV name %q, want %q", pv.Name, name)
			}
			hp := pv.Spec.HostPath
			if hp == nil || hp.Path != wantDir || hp.Type == nil || *hp.Type != corev1.HostPathDirectory {
				t.Errorf("hostPath %+v, want directory %s", hp, wantDir)
			}
			if got := pv.Spec.Capacity[corev1.ResourceStorage]; got.Cmp(resource.MustParse(tt.wantSize)) != 0 {
				t.Errorf("capacity %s, want %s", got.String(), tt.wantSize)
			}
			if !slices.Equal(pv.Spec.AccessModes, tt.wantModes) {
				t.Errorf("access modes %v, want %v", pv.Spec.AccessModes, tt.wantModes)
			}
			if pv.Spec.PersistentVolumeReclaimPolicy != tt.wantReclaim {
				t.Errorf("reclaim policy %q, want %q", pv.Spec.PersistentVolumeReclaimPolicy, tt.wantReclaim)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	hostPath := func(path string) *corev1.HostPathVolumeSource { return &corev1.HostPathVolumeSource{Path: path} }
	// Paths are relative to a temp root; Dir is root/volumes.
	tests := []struct {
		name     string
		hostPath func(root string) *corev1.HostPathVolumeSource
		make     []string // directories to create, each with a file in it
		wantGone []string
		wantKept []string
	}{
		{name: "own directory is removed",
			hostPath: func(root string) *corev1.HostPathVolumeSource { return hostPath(filepath.Join(root, "volumes/pvc-a")) },
			make:     []string{"volumes", "volumes/pvc-a"}, wantGone: []string{"volumes/pvc-a"}, wantKept: []string{"volumes"}},
		{name: "already gone",
			hostPath: func(root string) *corev1.HostPathVolumeSource { return hostPath(filepath.Join(root, "volumes/pvc-a")) },
			make:     []string{"volumes"}, wantKept: []string{"volumes"}},
		{name: "outside Dir is left alone",
			hostPath: func(root string) *corev1.HostPathVolumeSource { return hostPath(filepath.Join(root, "other/pvc-a")) },
			make:     []string{"other/pvc-a"}, wantKept: []string{"other/pvc-a"}},
		{name: "another volume's directory is left alone",
			hostPath: func(root string) *corev1.HostPathVolumeSource { return hostPath(filepath.Join(root, "volumes/pvc-b")) },
			make:     []string{"volumes/pvc-a", "volumes/pvc-b"}, wantKept: []string{"volumes/pvc-a", "volumes/pvc-b"}},
		{name: "dot-dot out of Dir is left alone",
			hostPath: func(root string) *corev1.HostPathVolumeSource { return hostPath(root + "/volumes/pvc-a/..") },
			make:     []string{"volumes", "volumes/pvc-a"}, wantKept: []string{"volumes", "volumes/pvc-a"}},
		{name: "parent of Dir is left alone",
			hostPath: func(root string) *corev1.HostPathVolumeSource { return hostPath(root + "/volumes/..") },
			make:     []string{"", "volumes", "other"}, wantKept: []string{"", "volumes", "other"}},
		{name: "sibling of Dir is left alone",
			hostPath: func(root string) *corev1.HostPathVolumeSource { return hostPath(root + "/volumes/../pvc-a") },
			make:     []string{"pvc-a", "volumes"}, wantKept: []string{"pvc-a", "volumes"}},
		{name: "Dir itself is left alone",
			hostPath: func(root string) *corev1.HostPathVolumeSource { return hostPath(filepath.Join(root, "volumes")) },
			make:     []string{"volumes"}, wantKept: []string{"volumes"}},
		{name: "not a hostPath volume",
			hostPath: func(string) *corev1.HostPathVolumeSource { return nil },
			make:     []string{"volumes/pvc-a"}, wantKept: []string{"volumes/pvc-a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range tt.make {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, d, "data"), []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			p := &Provisioner{Client: fake.NewClientset(), Dir: filepath.Join(root, "volumes")}
			pv := &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: "pvc-a"},
				Spec: corev1.PersistentVolumeSpec{
					PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: tt.hostPath(root)},
				},
			}
			if err := p.Delete(t.Context(), pv); err != nil {
				t.Fatal(err)
			}
			for _, d := range tt.wantGone {
				if _, err := os.Stat(filepath.Join(root, d)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s not removed (%v)", d, err)
				}
			}
			for _, d := range tt.wantKept {
				if _, err := os.Stat(filepath.Join(root, d, "data")); err != nil {
					t.Errorf("%s was touched: %v", d, err)
				}
			}
		})
	}
}

// TestRun runs the library's controller against a fake clientset: a claim
// gets its PV and directory, a claim whose directory cannot be made gets a
// ProvisioningFailed Event, another provisioner's claim is ignored, and the
// released PV is deleted with its directory.
func TestRun(t *testing.T) {
	good := ourClaim("good", "2Gi")
	bad := ourClaim("bad", "")
	other := newClaim("other", "standard", "example.com/other", "")
	cs := fake.NewClientset(good, bad, other)
	dir := t.TempDir()
	// A file where bad's volume directory goes: MkdirAll fails.
	if err := os.WriteFile(filepath.Join(dir, VolumeName(bad)), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p := &Provisioner{Client: cs, Dir: dir}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Run did not return after its context ended")
		}
	}
	defer stop()

	poll := func(what string, cond wait.ConditionWithContextFunc) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, cond); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	pvs := cs.CoreV1().PersistentVolumes()
	var pv *corev1.PersistentVolume
	poll("the PV", func(ctx context.Context) (bool, error) {
		var err error
		pv, err = pvs.Get(ctx, VolumeName(good), metav1.GetOptions{})
		return err == nil, nil
	})
	if ref := pv.Spec.ClaimRef; ref == nil || ref.UID != good.UID || ref.Name != good.Name || ref.Namespace != good.Namespace {
		t.Errorf("claimRef %+v does not name the claim", ref)
	}
	if pv.Spec.StorageClassName != ClassName || pv.Annotations["pv.kubernetes.io/provisioned-by"] != provisionerName {
		t.Errorf("PV class %q, annotations %v", pv.Spec.StorageClassName, pv.Annotations)
	}
	if got := pv.Spec.Capacity[corev1.ResourceStorage]; got.String() != "2Gi" {
		t.Errorf("capacity %s, want 2Gi", got.String())
	}
	volDir := filepath.Join(dir, pv.Name)
	if hp := pv.Spec.HostPath; hp == nil || hp.Path != volDir {
		t.Errorf("hostPath %+v, want %s", hp, volDir)
	}
	if fi, err := os.Stat(volDir); err != nil || !fi.IsDir() {
		t.Errorf("volume directory: %v", err)
	}

	poll("the ProvisioningFailed event", func(ctx context.Context) (bool, error) {
		evs, err := cs.CoreV1().Events(bad.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.UID == bad.UID && ev.Type == corev1.EventTypeWarning &&
				ev.Reason == "ProvisioningFailed" && strings.Contains(ev.Message, "not a directory") {
				return true, nil
			}
		}
		return false, nil
	})
	for _, c := range []*corev1.PersistentVolumeClaim{bad, other} {
		if _, err := pvs.Get(t.Context(), VolumeName(c), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("claim %s got a PV (%v)", c.Name, err)
		}
	}

	// Released (its claim deleted) with reclaim policy Delete: the PV and
	// its directory go.
	pv.Status.Phase = corev1.VolumeReleased
	if _, err := pvs.UpdateStatus(t.Context(), pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll("the released PV's deletion", func(ctx context.Context) (bool, error) {
		_, err := pvs.Get(ctx, pv.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := os.Stat(volDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("released volume's directory not removed (%v)", err)
	}
	stop()
}
