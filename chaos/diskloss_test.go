package chaos

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// diskPod is pod kafka-1 of StatefulSet kafka, mounting claim
// data-kafka-1 (bound to pv-1) at /var/lib/kafka/data.
func diskPod() *corev1.Pod {
	p := brokerPod("kafka-1")
	p.UID = "uid-kafka-1"
	p.OwnerReferences = []metav1.OwnerReference{{Kind: "StatefulSet", Name: "kafka", APIVersion: "apps/v1"}}
	p.Spec.Volumes = []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-kafka-1"}}},
	}
	p.Spec.Containers[1].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/kafka/data"}}
	return p
}

func diskClaim() *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: "data-kafka-1"},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1"}}
}

// diskSTS is StatefulSet kafka with the volume claim template "data".
func diskSTS() *appsv1.StatefulSet {
	s := testSTS("kafka", "kafka")
	s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	return s
}

func diskObjects(ns *corev1.Namespace) []runtime.Object {
	return []runtime.Object{ns, diskSTS(), diskPod(), diskClaim()}
}

// wipeExec records the disk-loss script's calls: container and argument.
func wipeExec(calls *[]string) Exec {
	return func(_ context.Context, _, pod, container string, argv []string) (string, error) {
		if len(argv) < 3 || argv[2] != wipeVolume {
			return "", errors.New("not the wipe script: " + strings.Join(argv, " "))
		}
		*calls = append(*calls, pod+"/"+container+" "+argv[len(argv)-1])
		return "4242\n", nil
	}
}

func TestDiskLoss(t *testing.T) {
	tests := []struct {
		name  string
		ns    *corev1.Namespace
		fault DiskLoss
		// wantErr is a substring of Inject's error ("" = none).
		wantErr      string
		wantNotAllow bool // the error wraps ErrDataLossNotAllowed
		// wantMutations are every mutating call Inject made, in order.
		wantMutations []string
		wantExec      []string
	}{
		{name: "no opt-in to data loss", ns: allowedNS("kafka"), fault: DiskLoss{Pod: "kafka-1", Mode: DiskLossClaim},
			wantErr: "target.allowDataLoss", wantNotAllow: true},
		{name: "no opt-in to disruption", ns: plainNS("kafka", nil), fault: DiskLoss{Pod: "kafka-1", Mode: DiskLossClaim, AllowDataLoss: true},
			wantErr: "lacks the label"},
		{name: "dry run", ns: allowedNS("kafka"), fault: DiskLoss{Scope: Scope{DryRun: true}, Pod: "kafka-1", Mode: DiskLossClaim, AllowDataLoss: true}},
		{name: "unknown mode", ns: allowedNS("kafka"), fault: DiskLoss{Pod: "kafka-1", Mode: "burn", AllowDataLoss: true}, wantErr: `mode "burn"`},
		{name: "no such volume", ns: allowedNS("kafka"), fault: DiskLoss{Pod: "kafka-1", Volume: "logs", Mode: DiskLossClaim, AllowDataLoss: true},
			wantErr: `no PVC volume "logs" (it has [data])`},
		{name: "wipe from a container that does not mount it", ns: allowedNS("kafka"), fault: DiskLoss{Pod: "kafka-1", Container: "kafka", Mode: DiskLossWipe, AllowDataLoss: true},
			wantErr: "no container kafka mounts volume data"},
		{name: "claim", ns: allowedNS("kafka"), fault: DiskLoss{Pod: "kafka-1", Mode: DiskLossClaim, AllowDataLoss: true},
			wantMutations: []string{"patch statefulsets kafka/kafka", "delete persistentvolumeclaims kafka/data-kafka-1", "delete pods kafka/kafka-1"}},
		{name: "wipe", ns: allowedNS("kafka"), fault: DiskLoss{Pod: "kafka-1", Mode: DiskLossWipe, AllowDataLoss: true},
			wantMutations: []string{"patch statefulsets kafka/kafka"}, wantExec: []string{"kafka-1/sidecar /var/lib/kafka/data"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := newClient(diskObjects(tt.ns)...)
			var calls []string
			f := tt.fault
			f.Client, f.Namespace, f.RunID, f.Exec = cs, "kafka", "r1", wipeExec(&calls)
			err := f.Inject(t.Context())
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatal(err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
			case tt.wantNotAllow && !errors.Is(err, ErrDataLossNotAllowed):
				t.Errorf("error %v does not wrap ErrDataLossNotAllowed", err)
			}
			if got := mutations(cs); !slices.Equal(got, tt.wantMutations) {
				t.Errorf("mutations %q, want %q", got, tt.wantMutations)
			}
			if !slices.Equal(calls, tt.wantExec) {
				t.Errorf("exec calls %q, want %q", calls, tt.wantExec)
			}
			if len(tt.wantMutations) == 0 {
				return
			}
			es := ledger(t, getSTS(t, cs, "kafka", "kafka"))
			if len(es) != 1 || es[0].Fault != KindDiskLoss || es[0].Data[dataPod] != "kafka-1" || es[0].Data[dataClaim] != "data-kafka-1" ||
				es[0].Data[dataPV] != "pv-1" || es[0].Data[dataMode] != string(f.Mode) || es[0].RunID != "r1" {
				t.Errorf("ledger %+v: want one disk-loss entry naming the pod, claim, volume and mode", es)
			}
			for range 2 { // idempotent
				if err := f.Recover(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if es := ledger(t, getSTS(t, cs, "kafka", "kafka")); len(es) != 0 {
				t.Errorf("ledger after Recover: %+v", es)
			}
		})
	}
}

// A second disk loss on the same StatefulSet is refused until the first
// one's entry is recovered; the refusal touches nothing.
func TestDiskLossRefusesASecond(t *testing.T) {
	sts := withLedger(t, diskSTS(), entry(KindDiskLoss, "r0"))
	cs := newClient(allowedNS("kafka"), sts, diskPod(), diskClaim())
	f := &DiskLoss{Scope: Scope{Client: cs, Namespace: "kafka"}, Pod: "kafka-1", Mode: DiskLossClaim, AllowDataLoss: true}
	if err := f.Inject(t.Context()); err == nil || !strings.Contains(err.Error(), "already carries a disk-loss entry") {
		t.Fatalf("error %v, want a refusal naming the earlier entry", err)
	}
	if got := mutations(cs); len(got) != 0 {
		t.Errorf("mutations %q, want none", got)
	}
}

// A claim that no volumeClaimTemplate makes would not come back: refused,
// untouched.
func TestDiskLossRefusesAClaimOfNoTemplate(t *testing.T) {
	cs := newClient(allowedNS("kafka"), testSTS("kafka", "kafka"), diskPod(), diskClaim())
	f := &DiskLoss{Scope: Scope{Client: cs, Namespace: "kafka"}, Pod: "kafka-1", Mode: DiskLossClaim, AllowDataLoss: true}
	if err := f.Inject(t.Context()); err == nil || !strings.Contains(err.Error(), "not one of statefulset kafka's volumeClaimTemplates") {
		t.Fatalf("error %v, want a refusal", err)
	}
	if got := mutations(cs); len(got) != 0 {
		t.Errorf("mutations %q, want none", got)
	}
}

// recover reports a disk loss as not undoable; a claim an interrupted
// Inject left terminating under its pod has that pod deleted.
func TestRecoverDiskLoss(t *testing.T) {
	e := entry(KindDiskLoss, "r1")
	e.Data = map[string]string{dataPod: "kafka-1", dataPodUID: "uid-kafka-1", dataClaim: "data-kafka-1", dataPV: "pv-1", dataMode: string(DiskLossClaim)}
	terminating := diskClaim()
	now := metav1.Now()
	terminating.DeletionTimestamp, terminating.Finalizers = &now, []string{"kubernetes.io/pvc-protection"}
	tests := []struct {
		name          string
		claim         *corev1.PersistentVolumeClaim
		wantLine      string
		wantMutations []string
	}{
		{name: "claim recreated", claim: &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: "data-kafka-1"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-2"}},
			wantLine: "not undoable", wantMutations: []string{"patch statefulsets kafka/kafka"}},
		{name: "claim left terminating", claim: terminating, wantLine: "to finish the loss",
			wantMutations: []string{"delete persistentvolumeclaims kafka/data-kafka-1", "delete pods kafka/kafka-1", "patch statefulsets kafka/kafka"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := newClient(allowedNS("kafka"), withLedger(t, diskSTS(), e), diskPod(), tt.claim)
			lines, err := RecoverAll(t.Context(), cs, Access{}, []string{"kafka"}, "", false)
			if err != nil {
				t.Fatal(err)
			}
			if len(lines) != 1 || !strings.Contains(lines[0], tt.wantLine) {
				t.Errorf("lines %q, want one saying %q", lines, tt.wantLine)
			}
			if got := mutations(cs); !slices.Equal(got, tt.wantMutations) {
				t.Errorf("mutations %q, want %q", got, tt.wantMutations)
			}
		})
	}
}
