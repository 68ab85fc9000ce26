package brokers

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Problem is one failed point of a rejoin check: what was expected and what
// was seen.
type Problem struct {
	Broker int32
	Check  string // what was checked, e.g. "same PV for claim data-kafka-1"
	Want   string
	Got    string
}

// String says which broker failed which check, e.g.
// "broker 1: same PV for claim data-kafka-1: want pvc-abc (uid 123), got pvc-def (uid 456)".
func (p Problem) String() string {
	return fmt.Sprintf("broker %d: %s: want %s, got %s", p.Broker, p.Check, p.Want, p.Got)
}

// Rejoin is what a fault changes about a broker's identity on purpose.
type Rejoin struct {
	// NewPod: the pod was replaced (a kill, a drain).
	NewPod bool
	// NewClaim names the claim a disk loss replaced: it comes back as a new
	// claim on a new volume.
	NewClaim string
}

// CompareIdentity checks that after is the same broker as before on
// Kubernetes, and returns one Problem per failed point, none if it is:
//
//   - the same broker ID ("same broker ID");
//   - a pod at all ("pod present"; without one, nothing else is checked);
//   - when rejoin.NewPod, a pod with a new UID: the old one was replaced
//     ("new pod");
//   - for each claim of before, the pod still mounts it ("claim <name>
//     mounted"), it is the same claim object, not one recreated under the
//     same name ("same claim <name>"), and it is bound to the same persistent
//     volume, by name and UID ("same PV for claim <name>"); except the claim
//     rejoin.NewClaim, which a disk loss replaced: it must be a new claim
//     ("new claim <name>") bound to a new volume ("new PV for claim <name>");
//   - its data dir is on a persistent volume: after has a PVC-backed volume
//     and none of its data dirs is ephemeral ("data dir on a persistent
//     volume"); an emptyDir data dir is named in the Problem.
func CompareIdentity(before, after Server, rejoin Rejoin) []Problem {
	var out []Problem
	add := func(check, want, got string) {
		out = append(out, Problem{Broker: before.ID, Check: check, Want: want, Got: got})
	}
	if after.ID != before.ID {
		add("same broker ID", strconv.Itoa(int(before.ID)), strconv.Itoa(int(after.ID)))
	}
	if after.PodUID == "" {
		add("pod present", "a pod for broker "+strconv.Itoa(int(before.ID)), "none")
		return out
	}
	if rejoin.NewPod && after.PodUID == before.PodUID {
		add("new pod", "a pod other than "+podRef(before.Pod, before.PodUID),
			"the same pod "+podRef(after.Pod, after.PodUID)+": it was never replaced")
	}

	for _, bv := range before.Volumes {
		av, ok := volumeByClaim(after.Volumes, bv.Claim)
		if !ok {
			add("claim "+bv.Claim+" mounted", "pod "+after.Pod+" to mount claim "+bv.Claim,
				"its claims "+claimNames(after.Volumes))
			continue
		}
		if bv.Claim == rejoin.NewClaim {
			if av.ClaimUID == bv.ClaimUID {
				add("new claim "+bv.Claim, "a claim other than "+uidRef(bv.ClaimUID), "the same claim: the disk was not replaced")
			}
			if av.PV == "" || av.PVUID == "" || av.PV == bv.PV {
				add("new PV for claim "+bv.Claim, "a volume other than "+pvRef(bv), pvRef(av))
			}
			continue
		}
		if av.ClaimUID != bv.ClaimUID {
			got := uidRef(av.ClaimUID)
			if av.ClaimUID != "" && bv.ClaimUID != "" {
				got += ": the claim was recreated"
			}
			add("same claim "+bv.Claim, uidRef(bv.ClaimUID), got)
		}
		if av.PV != bv.PV || av.PVUID != bv.PVUID {
			add("same PV for claim "+bv.Claim, pvRef(bv), pvRef(av))
		}
	}

	const check, want, notPersistent = "data dir on a persistent volume", "a PersistentVolumeClaim", "the data dir is not on a persistent volume: "
	switch {
	case len(after.Ephemeral) > 0:
		var on []string
		for _, e := range after.Ephemeral {
			if e == ContainerFilesystem {
				on = append(on, "the "+e)
			} else {
				on = append(on, fmt.Sprintf("volume %q (emptyDir or other ephemeral volume)", e))
			}
		}
		verb := " is"
		if len(on) > 1 {
			verb = " are"
		}
		add(check, want, notPersistent+strings.Join(on, " and ")+verb+" lost with the pod")
	case len(after.Volumes) == 0:
		add(check, want, notPersistent+"pod "+after.Pod+" has no PersistentVolumeClaim volume")
	}
	return out
}

// CompareDirectoryIDs checks that broker id came back with the data it
// had, and returns one Problem per log dir that it did not: before and
// after map each of its log dirs to the directory.id of the dir's
// meta.properties (KIP-858: KRaft mode, Kafka 3.7 and later), read before
// the fault and once the broker is back. Kafka writes a directory ID when
// it formats an empty dir, so a changed one means the dir was empty when
// the broker started: what it held did not survive ("same data in log dir
// <dir>"). A dir without an ID before is not checked.
func CompareDirectoryIDs(id int32, before, after map[string]string) []Problem {
	var out []Problem
	for _, dir := range slices.Sorted(maps.Keys(before)) {
		was := before[dir]
		if was == "" {
			continue
		}
		check, want := "same data in log dir "+dir, "directory.id "+was
		now, ok := after[dir]
		switch {
		case !ok:
			out = append(out, Problem{Broker: id, Check: check, Want: want,
				Got: "no such log dir any more (its log dirs: " + strings.Join(slices.Sorted(maps.Keys(after)), ", ") + ")"})
		case now != was:
			got := "directory.id " + now
			if now == "" {
				got = "no directory.id"
			}
			out = append(out, Problem{Broker: id, Check: check, Want: want,
				Got: got + ": the dir was empty when the broker started, so what it held did not survive"})
		}
	}
	return out
}

func volumeByClaim(vs []Volume, claim string) (Volume, bool) {
	for _, v := range vs {
		if v.Claim == claim {
			return v, true
		}
	}
	return Volume{}, false
}

func claimNames(vs []Volume) string {
	if len(vs) == 0 {
		return "none"
	}
	var ns []string
	for _, v := range vs {
		ns = append(ns, v.Claim)
	}
	return "[" + strings.Join(ns, " ") + "]"
}

func podRef(name string, uid types.UID) string {
	return fmt.Sprintf("%s (uid %s)", name, uid)
}

func uidRef(uid types.UID) string {
	if uid == "" {
		return "no claim"
	}
	return "uid " + string(uid)
}

func pvRef(v Volume) string {
	if v.PV == "" {
		return "unbound"
	}
	if v.PVUID == "" {
		return v.PV + " (no such volume)"
	}
	return fmt.Sprintf("%s (uid %s)", v.PV, v.PVUID)
}
