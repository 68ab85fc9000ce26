package storage

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func claim(name, class string, phase corev1.PersistentVolumeClaimPhase, volume string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kafka", UID: types.UID("uid-" + name)},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			VolumeName:       volume,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}},
		},
		Status: corev1.PersistentVolumeClaimStatus{Phase: phase},
	}
}

func TestProvisionerSync(t *testing.T) {
	tests := []struct {
		name    string
		claim   *corev1.PersistentVolumeClaim
		wantPV  bool
		wantDir bool
	}{
		{"pending claim of our class", claim("data-kafka-0", ClassName, corev1.ClaimPending, ""), true, true},
		{"other class", claim("other", "standard", corev1.ClaimPending, ""), false, false},
		{"already bound", claim("bound", ClassName, corev1.ClaimBound, "pv-x"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset(tt.claim)
			p := &Provisioner{Client: cs, Dir: t.TempDir()}
			if err := p.ensureClass(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := p.sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			pv, err := cs.CoreV1().PersistentVolumes().Get(t.Context(), VolumeName(tt.claim), metav1.GetOptions{})
			if (err == nil) != tt.wantPV {
				t.Fatalf("PV exists %t, want %t (%v)", err == nil, tt.wantPV, err)
			}
			_, derr := os.Stat(filepath.Join(p.Dir, VolumeName(tt.claim)))
			if (derr == nil) != tt.wantDir {
				t.Errorf("volume dir exists %t, want %t", derr == nil, tt.wantDir)
			}
			if !tt.wantPV {
				return
			}
			if ref := pv.Spec.ClaimRef; ref == nil || ref.UID != tt.claim.UID || ref.Name != tt.claim.Name {
				t.Errorf("claimRef %+v does not name the claim", ref)
			}
			if got := pv.Spec.Capacity[corev1.ResourceStorage]; got.String() != "2Gi" {
				t.Errorf("capacity %s, want 2Gi", got.String())
			}

			// Released with reclaim policy Delete: the provisioner deletes
			// the PV and its directory.
			pv.Status.Phase = corev1.VolumeReleased
			if _, err := cs.CoreV1().PersistentVolumes().UpdateStatus(t.Context(), pv, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := cs.CoreV1().PersistentVolumeClaims("kafka").Delete(t.Context(), tt.claim.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := p.sync(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CoreV1().PersistentVolumes().Get(t.Context(), pv.Name, metav1.GetOptions{}); err == nil {
				t.Errorf("released PV %s not deleted", pv.Name)
			}
			if _, err := os.Stat(filepath.Join(p.Dir, pv.Name)); err == nil {
				t.Errorf("released volume's directory not deleted")
			}
		})
	}
}
