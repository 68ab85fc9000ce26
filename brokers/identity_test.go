package brokers

import (
	"slices"
	"testing"
)

func TestCompareIdentity(t *testing.T) {
	data := Volume{Claim: "data-kafka-1", ClaimUID: "c-111", PV: "pvc-abc", PVUID: "123", StorageClass: "standard"}
	before := Server{ID: 1, Pod: "kafka-1", PodUID: "p-old", Node: "node-a", Volumes: []Volume{data}, Controller: true, Broker: true}
	restarted := func(change func(*Server)) Server {
		b := before
		b.PodUID, b.Node = "p-new", "node-b"
		b.Volumes = slices.Clone(before.Volumes)
		if change != nil {
			change(&b)
		}
		return b
	}

	tests := []struct {
		name       string
		before     *Server // nil: before
		after      Server
		wantNewPod bool
		newClaim   string   // Rejoin.NewClaim
		want       []string // Problem.String(), in order
	}{
		{
			name:       "new pod on the same volume",
			after:      restarted(nil),
			wantNewPod: true,
		},
		{
			name:       "same pod when a new one was wanted",
			after:      before,
			wantNewPod: true,
			want:       []string{"broker 1: new pod: want a pod other than kafka-1 (uid p-old), got the same pod kafka-1 (uid p-old): it was never replaced"},
		},
		{
			name:  "same pod when none was wanted",
			after: before,
		},
		{
			name:       "PV swapped",
			after:      restarted(func(b *Server) { b.Volumes[0].PV, b.Volumes[0].PVUID = "pvc-def", "456" }),
			wantNewPod: true,
			want:       []string{"broker 1: same PV for claim data-kafka-1: want pvc-abc (uid 123), got pvc-def (uid 456)"},
		},
		{
			name:  "PV recreated under the same name",
			after: restarted(func(b *Server) { b.Volumes[0].PVUID = "789" }),
			want:  []string{"broker 1: same PV for claim data-kafka-1: want pvc-abc (uid 123), got pvc-abc (uid 789)"},
		},
		{
			name: "claim recreated on a new volume",
			after: restarted(func(b *Server) {
				b.Volumes[0] = Volume{Claim: "data-kafka-1", ClaimUID: "c-222", PV: "pvc-new", PVUID: "999"}
			}),
			want: []string{
				"broker 1: same claim data-kafka-1: want uid c-111, got uid c-222: the claim was recreated",
				"broker 1: same PV for claim data-kafka-1: want pvc-abc (uid 123), got pvc-new (uid 999)",
			},
		},
		{
			name: "disk lost: claim recreated on a new volume",
			after: restarted(func(b *Server) {
				b.Volumes[0] = Volume{Claim: "data-kafka-1", ClaimUID: "c-222", PV: "pvc-new", PVUID: "999"}
			}),
			wantNewPod: true,
			newClaim:   "data-kafka-1",
		},
		{
			name:       "disk lost, but the claim is the old one",
			after:      restarted(nil),
			wantNewPod: true,
			newClaim:   "data-kafka-1",
			want: []string{
				"broker 1: new claim data-kafka-1: want a claim other than uid c-111, got the same claim: the disk was not replaced",
				"broker 1: new PV for claim data-kafka-1: want a volume other than pvc-abc (uid 123), got pvc-abc (uid 123)",
			},
		},
		{
			name:     "disk lost, new claim unbound",
			after:    restarted(func(b *Server) { b.Volumes[0] = Volume{Claim: "data-kafka-1", ClaimUID: "c-222"} }),
			newClaim: "data-kafka-1",
			want:     []string{"broker 1: new PV for claim data-kafka-1: want a volume other than pvc-abc (uid 123), got unbound"},
		},
		{
			name:  "claim recreated, unbound",
			after: restarted(func(b *Server) { b.Volumes[0] = Volume{Claim: "data-kafka-1", ClaimUID: "c-222"} }),
			want: []string{
				"broker 1: same claim data-kafka-1: want uid c-111, got uid c-222: the claim was recreated",
				"broker 1: same PV for claim data-kafka-1: want pvc-abc (uid 123), got unbound",
			},
		},
		{
			name:  "claim no longer mounted",
			after: restarted(func(b *Server) { b.Volumes = []Volume{{Claim: "other", ClaimUID: "c-9", PV: "pv-9", PVUID: "9"}} }),
			want:  []string{"broker 1: claim data-kafka-1 mounted: want pod kafka-1 to mount claim data-kafka-1, got its claims [other]"},
		},
		{
			name: "emptyDir broker",
			after: restarted(func(b *Server) {
				b.Volumes, b.Ephemeral = nil, []string{"data"}
			}),
			want: []string{
				"broker 1: claim data-kafka-1 mounted: want pod kafka-1 to mount claim data-kafka-1, got its claims none",
				`broker 1: data dir on a persistent volume: want a PersistentVolumeClaim, got the data dir is not on a persistent volume: volume "data" (emptyDir or other ephemeral volume) is lost with the pod`,
			},
		},
		{
			name:       "emptyDir broker from the start",
			before:     &Server{ID: 1, Pod: "kafka-1", PodUID: "p-old", Ephemeral: []string{"data"}},
			after:      Server{ID: 1, Pod: "kafka-1", PodUID: "p-new", Ephemeral: []string{"data"}},
			wantNewPod: true,
			want:       []string{`broker 1: data dir on a persistent volume: want a PersistentVolumeClaim, got the data dir is not on a persistent volume: volume "data" (emptyDir or other ephemeral volume) is lost with the pod`},
		},
		{
			name:  "data dir in the container filesystem beside a claim",
			after: restarted(func(b *Server) { b.Ephemeral = []string{ContainerFilesystem} }),
			want:  []string{"broker 1: data dir on a persistent volume: want a PersistentVolumeClaim, got the data dir is not on a persistent volume: the container filesystem is lost with the pod"},
		},
		{
			name:  "no volume at all",
			after: restarted(func(b *Server) { b.Volumes = nil }),
			want: []string{
				"broker 1: claim data-kafka-1 mounted: want pod kafka-1 to mount claim data-kafka-1, got its claims none",
				"broker 1: data dir on a persistent volume: want a PersistentVolumeClaim, got the data dir is not on a persistent volume: pod kafka-1 has no PersistentVolumeClaim volume",
			},
		},
		{
			name:       "ID changed",
			after:      restarted(func(b *Server) { b.ID = 4 }),
			wantNewPod: true,
			want:       []string{"broker 1: same broker ID: want 1, got 4"},
		},
		{
			name:       "no pod",
			after:      Server{},
			wantNewPod: true,
			want: []string{
				"broker 1: same broker ID: want 1, got 0",
				"broker 1: pod present: want a pod for broker 1, got none",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := before
			if tt.before != nil {
				b = *tt.before
			}
			var got []string
			for _, p := range CompareIdentity(b, tt.after, Rejoin{NewPod: tt.wantNewPod, NewClaim: tt.newClaim}) {
				if p.Broker != b.ID {
					t.Errorf("problem %+v names broker %d; want %d", p, p.Broker, b.ID)
				}
				got = append(got, p.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("CompareIdentity() problems:\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

func TestCompareDirectoryIDs(t *testing.T) {
	const lost = ": the dir was empty when the broker started, so what it held did not survive"
	tests := []struct {
		name          string
		before, after map[string]string
		want          []string
	}{
		{name: "same IDs", before: map[string]string{"/data": "A", "/meta": "B"}, after: map[string]string{"/data": "A", "/meta": "B"}},
		{name: "one dir formatted anew", before: map[string]string{"/data": "A", "/meta": "B"}, after: map[string]string{"/data": "A", "/meta": "C"},
			want: []string{"broker 2: same data in log dir /meta: want directory.id B, got directory.id C" + lost}},
		{name: "ID gone", before: map[string]string{"/data": "A"}, after: map[string]string{"/data": ""},
			want: []string{"broker 2: same data in log dir /data: want directory.id A, got no directory.id" + lost}},
		{name: "dir gone", before: map[string]string{"/data": "A", "/x": "X"}, after: map[string]string{"/data": "A", "/y": "Y"},
			want: []string{"broker 2: same data in log dir /x: want directory.id X, got no such log dir any more (its log dirs: /data, /y)"}},
		{name: "no ID before (ZooKeeper mode, Kafka before 3.7): not checked", before: map[string]string{"/data": ""}, after: map[string]string{"/data": "Z"}},
		{name: "a dir more after is no loss", before: map[string]string{"/data": "A"}, after: map[string]string{"/data": "A", "/new": "N"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range CompareDirectoryIDs(2, tt.before, tt.after) {
				got = append(got, p.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("CompareDirectoryIDs() =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}
