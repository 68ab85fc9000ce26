package manifests

import (
	"testing"

	"github.com/kafkachaos/kafkachaos/internal/kube"
)

func TestLayoutsDecode(t *testing.T) {
	for _, l := range Layouts() {
		t.Run(l.Name, func(t *testing.T) {
			raw, err := l.Read()
			if err != nil {
				t.Fatal(err)
			}
			objs, err := kube.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			for _, o := range objs {
				kinds[o.GetKind()]++
				if o.GetKind() != "Namespace" && o.GetNamespace() != l.Namespace {
					t.Errorf("%s %s is in namespace %q, want %q", o.GetKind(), o.GetName(), o.GetNamespace(), l.Namespace)
				}
				if o.GetKind() == "Namespace" && o.GetLabels()["kafkachaos.io/allow-disruption"] != "true" {
					t.Errorf("namespace %s does not opt in to disruption", o.GetName())
				}
			}
			for _, k := range []string{"Namespace", "Service", "PodDisruptionBudget", "StatefulSet"} {
				if kinds[k] == 0 {
					t.Errorf("no %s in %s (kinds: %v)", k, l.File, kinds)
				}
			}
			sts := 0
			for _, o := range objs {
				if o.GetKind() == "StatefulSet" && o.GetName() == l.StatefulSet {
					sts++
				}
			}
			if sts != 1 {
				t.Errorf("StatefulSet %s not found in %s", l.StatefulSet, l.File)
			}
		})
	}
}

func TestLayoutNamed(t *testing.T) {
	if _, err := LayoutNamed("combined"); err != nil {
		t.Error(err)
	}
	if _, err := LayoutNamed("zookeeper"); err == nil {
		t.Error("want an error for an unknown layout")
	}
}
