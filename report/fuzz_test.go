package report

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode: any report.json is read or refused with an error, never a
// panic, and what is read writes back as a report that reads again, with
// the same specs (compare and report take user files).
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"report.json", "report-pod-kill.json", "report-v1-partition.json"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	for _, seed := range []string{`[]`, `{"schema": 2}`, `{"schema": 99}`, `[{"spec": "x", "checks": [{"name": "records"}]}]`, `{"schema": 2, "specs": null}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		run, err := decode(raw)
		if err != nil {
			return
		}
		path := filepath.Join(t.TempDir(), "report.json")
		if err := Write(path, run); err != nil {
			t.Fatalf("a report that was read does not write: %v", err)
		}
		back, err := Read(path)
		if err != nil {
			t.Fatalf("a report written from one that was read does not read: %v", err)
		}
		if len(back.Specs) != len(run.Specs) {
			t.Fatalf("%d specs read back, %d written", len(back.Specs), len(run.Specs))
		}
		_ = Compare(run.Specs, back.Specs, 0.1) // must not panic on whatever was read
	})
}
