package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Keys of a config-change entry's Data.
const (
	dataContainer         = "container"
	dataEnv               = "env"
	dataValue             = "value"             // the value we set
	dataHadPrevious       = "hadPrevious"       // "true" or "false"
	dataPreviousValue     = "previousValue"     // when hadPrevious
	dataPreviousValueFrom = "previousValueFrom" // JSON EnvVarSource, when the variable had one
)

// ConfigChange sets env var Env=Value in one container of a StatefulSet's
// pod template, which rolls its pods (e.g.
// KAFKA_AUTO_LEADER_REBALANCE_ENABLE=true). The ledger entry on the
// StatefulSet keeps the previous value, or that there was none; Recover
// restores it (which rolls again) and removes the entry. Recover leaves the
// variable alone if someone changed it since, and does nothing without an
// entry. A StatefulSet carries one config-change entry at a time: Inject
// refuses to change a second variable before the first is recovered.
type ConfigChange struct {
	Scope
	StatefulSet string
	// Container defaults to the first container of the pod template.
	Container string
	Env       string
	Value     string
}

var _ Fault = (*ConfigChange)(nil)

// Name implements Fault.
func (f *ConfigChange) Name() string {
	in := ""
	if f.Container != "" {
		in = " container " + f.Container + " of"
	}
	return fmt.Sprintf("set %s=%s in%s statefulset %s/%s", f.Env, f.Value, in, f.Namespace, f.StatefulSet)
}

// Plan says what Inject does.
func (f *ConfigChange) Plan() string {
	c := "the first container"
	if f.Container != "" {
		c = "container " + f.Container
	}
	return fmt.Sprintf("set env %s=%q in %s of statefulset %s/%s's pod template, which rolls its pods; the ledger entry keeps the previous value",
		f.Env, f.Value, c, f.Namespace, f.StatefulSet)
}

// Inject implements Fault.
func (f *ConfigChange) Inject(ctx context.Context) error { return f.inject(ctx, f.validate(), f.look) }

// validate checks the fault's own fields; it makes no call.
func (f *ConfigChange) validate() error {
	if f.Env == "" {
		return fmt.Errorf("chaos: %s: no env var name", f.Name())
	}
	return nil
}

func (f *ConfigChange) look(ctx context.Context) (string, func(context.Context) error, error) {
	c, err := templateContainer(ctx, f.Client, f.Namespace, f.StatefulSet, f.Container)
	if err != nil {
		return "", nil, fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	now := "no " + f.Env
	if cur := envVar(c, f.Env); cur != nil {
		now = describeEnv(cur)
	}
	return fmt.Sprintf("%s; container %s has %s now", f.Plan(), c.Name, now), f.set, nil
}

// set sets the variable and writes the ledger entry, in one patch.
func (f *ConfigChange) set(ctx context.Context) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := f.Client.AppsV1().StatefulSets(f.Namespace).Get(ctx, f.StatefulSet, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c, err := container(s, f.Container)
		if err != nil {
			return err
		}
		cur := envVar(c, f.Env)
		es, err := LedgerOf(s)
		if err != nil {
			return err
		}
		e, ok := entryOf(es, KindConfigChange)
		switch {
		case ok && (e.Data[dataEnv] != f.Env || e.Data[dataContainer] != c.Name):
			return fmt.Errorf("statefulset already carries a config-change entry for %s in container %s (%s); recover it first (kafkachaos recover)",
				e.Data[dataEnv], e.Data[dataContainer], e)
		case isValue(cur, f.Value) && !ok:
			f.say("%s: %s is already %q; nothing to change", f.Name(), f.Env, f.Value)
			return nil
		case isValue(cur, f.Value):
			return nil // injected before; the entry keeps the original value
		case ok:
			// Injected before with another value: keep the original previous
			// value, record the new one.
			e.Data[dataValue] = f.Value
		default:
			e = Entry{Fault: KindConfigChange, RunID: f.RunID, At: time.Now().UTC(), Data: map[string]string{
				dataContainer: c.Name, dataEnv: f.Env, dataValue: f.Value, dataHadPrevious: "false",
			}}
			e.Undo = fmt.Sprintf("remove env %s from container %s", f.Env, c.Name)
			if cur != nil {
				e.Data[dataHadPrevious] = "true"
				e.Data[dataPreviousValue] = cur.Value
				if cur.ValueFrom != nil {
					b, err := json.Marshal(cur.ValueFrom)
					if err != nil {
						return fmt.Errorf("encode previous value: %w", err)
					}
					e.Data[dataPreviousValueFrom] = string(b)
				}
				e.Undo = fmt.Sprintf("restore env %s in container %s", describeEnv(cur), c.Name)
			}
		}
		md, err := metaPatch(s, withEntry(es, e))
		if err != nil {
			return err
		}
		return patch(ctx, f.Client, f.Namespace, f.StatefulSet, "statefulsets", map[string]any{
			"metadata": md,
			"spec":     containersPatch(map[string]map[string]any{c.Name: {"env": []any{map[string]any{"name": f.Env, "value": f.Value, "valueFrom": nil}}}}),
		})
	})
	if err != nil {
		return fmt.Errorf("chaos: %s: %w", f.Name(), err)
	}
	return nil
}

// Recover implements Fault: it restores the variable recorded in the ledger
// entry and removes the entry.
func (f *ConfigChange) Recover(ctx context.Context) error {
	return f.recoverOn(ctx, f.Name(), Access{}, onStatefulSet, f.StatefulSet, func(e Entry) bool {
		return e.Fault == KindConfigChange && e.Data[dataEnv] == f.Env &&
			(f.Container == "" || e.Data[dataContainer] == f.Container)
	})
}

// configChangeLedger is KindConfigChange's row of the registry: on a
// StatefulSet, undone in its one patch.
func configChangeLedger() ledgerKind {
	return ledgerKind{kind: KindConfigChange, object: onStatefulSet, order: orderStatefulSets, undo: undoConfigChange}
}

// undoConfigChange restores the variable e recorded: its previous value or
// source, or its absence. A variable changed since, or a container gone,
// is left alone.
func undoConfigChange(_ context.Context, u *undo, e Entry) (string, bool, error) {
	s, err := object[*appsv1.StatefulSet](u)
	if err != nil {
		return "", false, err
	}
	name, env := e.Data[dataContainer], e.Data[dataEnv]
	c, err := container(s, name)
	if err != nil {
		return fmt.Sprintf("drop entry, container %s is gone (%s)", name, e), false, nil
	}
	cur := envVar(c, env)
	if !isValue(cur, e.Data[dataValue]) {
		now := "absent"
		if cur != nil {
			now = describeEnv(cur)
		}
		return fmt.Sprintf("drop entry, leave env %s in container %s as is: it was changed since (now %s) (%s)", env, name, now, e), false, nil
	}
	if e.Data[dataHadPrevious] != "true" {
		u.addEnv(name, map[string]any{"name": env, "$patch": "delete"})
		return fmt.Sprintf("remove env %s from container %s (%s)", env, name, e), false, nil
	}
	prev := corev1.EnvVar{Name: env, Value: e.Data[dataPreviousValue]}
	el := map[string]any{"name": env, "value": nil, "valueFrom": nil}
	if prev.Value != "" {
		el["value"] = prev.Value
	}
	if raw := e.Data[dataPreviousValueFrom]; raw != "" {
		var from corev1.EnvVarSource
		if err := json.Unmarshal([]byte(raw), &from); err != nil {
			return "", false, fmt.Errorf("ledger entry %s: previous valueFrom: %w", e, err)
		}
		prev.ValueFrom = &from
		el["valueFrom"] = &from
	}
	u.addEnv(name, el)
	return fmt.Sprintf("restore env %s in container %s (%s)", describeEnv(&prev), name, e), false, nil
}

// addEnv adds an element to the env patch of container c.
func (u *undo) addEnv(c string, el map[string]any) {
	f := u.container(c)
	env, _ := f["env"].([]any)
	f["env"] = append(env, el)
}

// templateContainer reads StatefulSet ns/sts and finds container name in
// its pod template; "" is the first.
func templateContainer(ctx context.Context, cs kubernetes.Interface, ns, sts, name string) (*corev1.Container, error) {
	s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, sts, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return container(s, name)
}

// container finds container name in s's pod template; "" is the first.
func container(s *appsv1.StatefulSet, name string) (*corev1.Container, error) {
	cs := s.Spec.Template.Spec.Containers
	if name == "" && len(cs) > 0 {
		return &cs[0], nil
	}
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i], nil
		}
	}
	if name == "" {
		return nil, fmt.Errorf("statefulset %s/%s has no containers", s.Namespace, s.Name)
	}
	return nil, fmt.Errorf("statefulset %s/%s has no container %q", s.Namespace, s.Name, name)
}

func envVar(c *corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// isValue reports whether v is set to value (and not from a source).
func isValue(v *corev1.EnvVar, value string) bool {
	return v != nil && v.ValueFrom == nil && v.Value == value
}

func describeEnv(v *corev1.EnvVar) string {
	if v.ValueFrom != nil {
		return v.Name + " (from a source)"
	}
	return fmt.Sprintf("%s=%q", v.Name, v.Value)
}
