package loopback

import "testing"

func TestFreePortsAreDistinct(t *testing.T) {
	ports, err := FreePorts(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v: %d repeated or invalid", ports, p)
		}
		seen[p] = true
	}
	// Below the ephemeral range, where no outgoing connection takes them.
	if high, below := ephemeralStart(); below {
		for _, p := range ports {
			if p < lowestPort || p >= high {
				t.Errorf("port %d is not in [%d, %d): the ephemeral range starts at %d", p, lowestPort, high, high)
			}
		}
	}
}

func TestParseRangeStart(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{in: "32768\t60999\n", want: 32768},
		{in: "1024 65535", want: 1024},
		{in: "", wantErr: true},
		{in: "low high", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseRangeStart(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseRangeStart(%q) = %d, %v; want %d (error %t)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
