package soak

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// WriteHeapProfile writes the process's heap profile, after a garbage
// collection so that it shows what is live, to path. Two of them, one
// after the warm-up and one at the end, show where memory grew:
// go tool pprof -top -diff_base WARM END.
func WriteHeapProfile(path string) error {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("soak: heap profile: %w", err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("soak: heap profile: %w", err)
	}
	return f.Close()
}
