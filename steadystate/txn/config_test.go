package txn

import (
	"testing"
	"time"
)

func TestSettingsValidate(t *testing.T) {
	tests := []struct {
		name string
		s    Settings
		ok   bool
	}{
		{"none", Settings{}, true},
		{"defaults", Settings{Producers: 3}.WithDefaults(), true},
		{"too many producers", Settings{Producers: 65}.WithDefaults(), false},
		{"negative", Settings{Producers: -1}, false},
		{"every one aborted", Settings{Producers: 1, AbortEvery: 1}.WithDefaults(), false},
		{"too short a timeout", Settings{Producers: 1, Timeout: time.Millisecond}.WithDefaults(), false},
		{"a copy job", Settings{Producers: 1, Copiers: 2}.WithDefaults(), true},
		{"a copy job alone", Settings{Copiers: 2}, false},
		{"too many copiers", Settings{Producers: 1, Copiers: 65}.WithDefaults(), false},
		{"a zombie", Settings{Producers: 1, Timeout: 5 * time.Second, Stall: 16 * time.Second}.WithDefaults(), true},
		{"a stall the coordinator may not have aborted yet", Settings{Producers: 1, Timeout: 5 * time.Second, Stall: 14 * time.Second}.WithDefaults(), false},
		{"too many records", Settings{Producers: 1, Records: 1001}.WithDefaults(), false},
	}
	for _, tt := range tests {
		if err := tt.s.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate(%+v) = %v, want ok %v", tt.name, tt.s, err, tt.ok)
		}
	}
	if got := (Settings{Producers: 1}).WithDefaults().StuckAfter(); got != 55*time.Second {
		t.Errorf("StuckAfter with the defaults = %s, want 55s", got)
	}
}
