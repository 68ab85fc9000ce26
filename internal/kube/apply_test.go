package kube

import "testing"

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		objs     int
		wantErr  bool
	}{
		{"empty", "", 0, false},
		{"separators only", "---\n---\n", 0, false},
		{"one object", "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n", 1, false},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", 0, true},
		{"no name", "apiVersion: v1\nkind: Namespace\n", 0, true},
		{"bad yaml", "apiVersion: [\n", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Decode([]byte(tc.in))
			if (err != nil) != tc.wantErr || len(objs) != tc.objs {
				t.Errorf("Decode = %d objects, %v; want %d, error %t", len(objs), err, tc.objs, tc.wantErr)
			}
		})
	}
}
