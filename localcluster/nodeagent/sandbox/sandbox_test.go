package sandbox

import "testing"

func TestParseMount(t *testing.T) {
	tests := []struct {
		in      string
		want    Mount
		wantErr bool
	}{
		{in: "/a:/b", want: Mount{Source: "/a", Target: "/b"}},
		{in: "/a:/b:ro", want: Mount{Source: "/a", Target: "/b", ReadOnly: true}},
		{in: "/a:relative", wantErr: true},
		{in: "/a:/b:rw", wantErr: true},
		{in: "/a", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseMount(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("ParseMount(%q) = %+v, %v", tt.in, got, err)
		}
		if err == nil && got.String() != tt.in {
			t.Errorf("round trip of %q gave %q", tt.in, got.String())
		}
	}
}

func TestOverlayPath(t *testing.T) {
	for in, want := range map[string]string{
		"/var/lib/x":  "/var/lib/x",
		"/a,b":        `/a\,b`,
		"/a:b":        `/a\:b`,
		`/a\b,c:d`:    `/a\\b\,c\:d`,
		"/state dir/": "/state dir/",
	} {
		if got := overlayPath(in); got != want {
			t.Errorf("overlayPath(%q) = %q, want %q", in, got, want)
		}
	}
}
