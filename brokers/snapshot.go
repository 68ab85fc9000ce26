package brokers

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/internal/kube"
)

// ContainerFilesystem stands in Broker.Ephemeral for a data dir that no
// volume is mounted at: it lives in the container's writable layer.
const ContainerFilesystem = "container filesystem"

// Volume is one persistent volume claim of a broker pod and what it is
// bound to.
type Volume struct {
	Claim        string    // the claim's name
	ClaimUID     types.UID // empty if the claim does not exist
	PV           string    // the bound persistent volume's name; empty if unbound
	PVUID        types.UID // empty if unbound, or the volume does not exist
	StorageClass string    // the claim's storage class, else the volume's
}

// Server is a snapshot of one Kafka server's identity on Kubernetes: a
// pod that runs the broker role, the KRaft controller role, or both
// (process.roles). Kafka's own word for either is "server"; a controller
// only is Server{Controller: true, Broker: false}.
type Server struct {
	ID     int32
	Pod    string
	PodUID types.UID
	Node   string
	PodIP  string
	// Container is the name of the pod's Kafka container, if one is
	// recognised (see Flavor).
	Container string
	// Hostname is the pod's spec.hostname, when set (Koperator names its
	// pods kafka-0-x7k2p but sets hostname kafka-0).
	Hostname string
	Ready    bool // the pod's Ready condition is True
	// Volumes are every PVC-backed volume of the pod (generic ephemeral
	// volumes included, under the claim name <pod>-<volume>), sorted by
	// claim name.
	Volumes []Volume
	// Ephemeral names the volumes that hold a Kafka data dir but die with
	// the pod (emptyDir, generic ephemeral, inline CSI), or
	// ContainerFilesystem when no volume is mounted at a data dir; see
	// Snapshot for how data dirs are found.
	Ephemeral []string
	// Controller says whether the pod runs the KRaft controller role.
	Controller bool
	// Broker says whether the pod runs the broker role.
	Broker bool
	// ZooKeeperConnect is the broker's zookeeper.connect, as its env
	// gives it (ZooKeeper mode; see ZooKeeperConnect); "" in KRaft mode or
	// when the env does not tell.
	ZooKeeperConnect string
}

// Snapshot lists the Kafka pods of flavor f in namespace, narrowed by the
// label selector unless it is "", and returns them as brokers (and
// controllers), sorted by ID. An empty f is detected with DetectFlavor. No
// pod of the flavor is an empty snapshot, not an error; a pod of the flavor
// without an ID, or two live pods with the same ID, is an error. Of a
// terminating pod and a live one with the same ID, the live one is kept.
//
// Each PVC-backed volume is resolved to its claim and persistent volume:
// unbound claims have an empty PV, and a claim or volume that does not
// exist has an empty UID.
//
// Data dirs, for Broker.Ephemeral, are the paths in the Kafka container's
// env KAFKA_LOG_DIRS, KAFKA_LOG_DIR, KAFKA_CFG_LOG_DIRS, LOG_DIRS (Koperator)
// or KAFKA_METADATA_LOG_DIR, comma-separated; a mount holds a data dir if its path is the
// dir, a parent or a child of it. Without such env, every mount whose path
// contains "kafka" and "data" or "log" holds one (Strimzi's
// /var/lib/kafka/data-0, Koperator's /kafka-logs), and when there is no such
// mount and the container mounts no claim at all, the data dir is in the
// container filesystem. Config volumes (configMap, secret, downwardAPI,
// projected) and read-only mounts never hold a data dir.
func Snapshot(ctx context.Context, cs kubernetes.Interface, namespace, selector string, f Flavor) ([]Server, error) {
	if f == "" {
		var err error
		if f, err = DetectFlavor(ctx, cs, namespace, selector); err != nil {
			return nil, err
		}
	}
	if !slices.Contains(knownFlavors(), f) {
		return nil, fmt.Errorf("brokers: snapshot: unknown flavor %q", f)
	}
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("brokers: snapshot: listing pods in %s: %w", where(namespace, selector), err)
	}
	byID := map[int32]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if classify(p) != f {
			continue
		}
		id, ok := f.BrokerID(p)
		if !ok {
			return nil, fmt.Errorf("brokers: snapshot: %s pod %s carries no broker ID", f, p.Name)
		}
		prev, dup := byID[id]
		switch {
		case !dup:
			byID[id] = p
		case prev.DeletionTimestamp != nil && p.DeletionTimestamp == nil:
			byID[id] = p
		case prev.DeletionTimestamp == nil && p.DeletionTimestamp != nil:
		default:
			return nil, fmt.Errorf("brokers: snapshot: pods %s and %s both carry broker ID %d under flavor %s", prev.Name, p.Name, id, f)
		}
	}
	out := make([]Server, 0, len(byID))
	for id, p := range byID {
		b := Server{
			ID:        id,
			Pod:       p.Name,
			PodUID:    p.UID,
			Node:      p.Spec.NodeName,
			PodIP:     p.Status.PodIP,
			Hostname:  p.Spec.Hostname,
			Ready:     kube.PodReady(p),
			Ephemeral: ephemeralDataDirs(p),
		}
		if c := kafkaContainer(p); c != nil {
			b.Container = c.Name
		}
		b.Controller, b.Broker = f.roles(p)
		b.ZooKeeperConnect = zooKeeperConnect(p)
		if b.Volumes, err = volumes(ctx, cs, p); err != nil {
			return nil, fmt.Errorf("brokers: snapshot: broker %d (pod %s): %w", id, p.Name, err)
		}
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b Server) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// Subject names b in messages: "broker 1 (pod kafka-1)".
func (b Server) Subject() string { return fmt.Sprintf("broker %d (pod %s)", b.ID, b.Pod) }

// ByID finds broker id in a snapshot.
func ByID(bs []Server, id int32) (Server, bool) {
	for _, b := range bs {
		if b.ID == id {
			return b, true
		}
	}
	return Server{}, false
}

// volumes resolves the PVC-backed volumes of p to their claims and
// persistent volumes.
func volumes(ctx context.Context, cs kubernetes.Interface, p *corev1.Pod) ([]Volume, error) {
	var out []Volume
	for _, v := range p.Spec.Volumes {
		var claim string
		switch {
		case v.PersistentVolumeClaim != nil:
			claim = v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil:
			claim = p.Name + "-" + v.Name
		default:
			continue
		}
		vol := Volume{Claim: claim}
		pvc, err := cs.CoreV1().PersistentVolumeClaims(p.Namespace).Get(ctx, claim, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			out = append(out, vol)
			continue
		case err != nil:
			return nil, fmt.Errorf("getting claim %s: %w", claim, err)
		}
		vol.ClaimUID, vol.PV = pvc.UID, pvc.Spec.VolumeName
		if pvc.Spec.StorageClassName != nil {
			vol.StorageClass = *pvc.Spec.StorageClassName
		}
		if vol.PV != "" {
			pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, vol.PV, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return nil, fmt.Errorf("getting persistent volume %s of claim %s: %w", vol.PV, claim, err)
			default:
				vol.PVUID = pv.UID
				if vol.StorageClass == "" {
					vol.StorageClass = pv.Spec.StorageClassName
				}
			}
		}
		out = append(out, vol)
	}
	slices.SortFunc(out, func(a, b Volume) int { return strings.Compare(a.Claim, b.Claim) })
	return out, nil
}

// ephemeralDataDirs returns the names of the volumes of p that hold a Kafka
// data dir and die with the pod, sorted, or ContainerFilesystem for a data
// dir on no volume. Snapshot's doc says how data dirs are found.
func ephemeralDataDirs(p *corev1.Pod) []string {
	c := kafkaContainer(p)
	if c == nil {
		return nil
	}
	vols := map[string]*corev1.Volume{}
	for i := range p.Spec.Volumes {
		vols[p.Spec.Volumes[i].Name] = &p.Spec.Volumes[i]
	}
	// The mounts that may hold data: writable, and not config.
	var mounts []corev1.VolumeMount
	claimMounted := false
	for _, m := range c.VolumeMounts {
		v := vols[m.Name]
		if v == nil || m.ReadOnly || configVolume(v) {
			continue
		}
		mounts = append(mounts, m)
		claimMounted = claimMounted || v.PersistentVolumeClaim != nil
	}

	var out []string
	add := func(name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if dirs := logDirs(p, c); len(dirs) > 0 {
		for _, d := range dirs {
			held := false
			for _, m := range mounts {
				if related(path.Clean(m.MountPath), d) {
					held = true
					if ephemeralVolume(vols[m.Name]) {
						add(m.Name)
					}
				}
			}
			if !held {
				add(ContainerFilesystem)
			}
		}
	} else {
		held := false
		for _, m := range mounts {
			mp := strings.ToLower(m.MountPath)
			if strings.Contains(mp, "kafka") && (strings.Contains(mp, "data") || strings.Contains(mp, "log")) {
				held = true
				if ephemeralVolume(vols[m.Name]) {
					add(m.Name)
				}
			}
		}
		if !held && !claimMounted {
			add(ContainerFilesystem)
		}
	}
	slices.Sort(out)
	return out
}

// logDirs returns the data dirs that the Kafka container's env names,
// cleaned.
func logDirs(p *corev1.Pod, c *corev1.Container) []string {
	var out []string
	for _, name := range []string{"KAFKA_LOG_DIRS", "KAFKA_LOG_DIR", "KAFKA_CFG_LOG_DIRS", "LOG_DIRS", "KAFKA_METADATA_LOG_DIR"} {
		v, ok := envValue(p, c, name)
		if !ok {
			continue
		}
		for d := range strings.SplitSeq(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				out = append(out, path.Clean(d))
			}
		}
	}
	return out
}

// related says whether a and b are the same path or one is under the other.
func related(a, b string) bool {
	under := func(child, parent string) bool {
		return parent == "/" || strings.HasPrefix(child, parent+"/")
	}
	return a == b || under(a, b) || under(b, a)
}

func configVolume(v *corev1.Volume) bool {
	return v.ConfigMap != nil || v.Secret != nil || v.DownwardAPI != nil || v.Projected != nil
}

// ephemeralVolume says whether v dies with the pod.
func ephemeralVolume(v *corev1.Volume) bool {
	return v.EmptyDir != nil || v.Ephemeral != nil || v.CSI != nil
}
