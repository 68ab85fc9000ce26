package suites

import "github.com/kafkachaos/kafkachaos/manifests"

// UsersKafka reports whether the suite tests a Kafka it did not deploy on
// the local cluster (target.layout none).
func (c Config) UsersKafka() bool { return c.Local() && c.Target.Layout == LayoutNone }

// SpecLayout is the manifests/kafka layout of the Kafka that the suite, or
// a spec for itself, deploys: target.layout, or the default one with
// LayoutNone.
func (c Config) SpecLayout() (manifests.Layout, error) {
	if c.Target.Layout == LayoutNone {
		return manifests.Layouts()[0], nil
	}
	return manifests.LayoutNamed(c.Target.Layout)
}

// layoutIn is the layout of manifests/kafka that deploys into namespace
// ns, or LayoutNone: on a kept cluster, a namespace names the Kafka to
// test.
func layoutIn(ns string) string {
	for _, l := range manifests.Layouts() {
		if l.Namespace == ns {
			return l.Name
		}
	}
	return LayoutNone
}
