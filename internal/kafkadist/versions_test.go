package kafkadist

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLineOf(t *testing.T) {
	tests := []struct {
		version string
		want    string // the line's name; "" for ErrUnknownLine
		log4j2  bool
	}{
		{"4.4.0", "4.x", true},
		{"4.0.1", "4.x", true},
		{"3.9.2", "3.9.x", false},
		{"3.8.1", "3.8.x", false},
		{"3.7.2", "3.7.x", false},
		{"3.6.2", "", false},
		{"5.0.0", "", false},
		{"4.4", "", false},
		{"latest", "", false},
		{"4.4.0-rc1", "", false},
	}
	for _, tt := range tests {
		l, err := LineOf(tt.version)
		if tt.want == "" {
			if !errors.Is(err, ErrUnknownLine) {
				t.Errorf("LineOf(%q) = %+v, %v; want ErrUnknownLine", tt.version, l, err)
			}
			continue
		}
		if err != nil || l.Name != tt.want || l.Log4j2 != tt.log4j2 {
			t.Errorf("LineOf(%q) = %+v, %v; want %s (log4j2 %v)", tt.version, l, err, tt.want, tt.log4j2)
		}
	}
}

func TestBrokerLogging(t *testing.T) {
	for _, tt := range []struct {
		version, file, opt, content string
	}{
		{"4.4.0", "log4j2.properties", "-Dlog4j2.configurationFile=/p/log4j2.properties", "rootLogger"},
		{"3.9.2", "log4j.properties", "-Dlog4j.configuration=file:/p/log4j.properties", "log4j.rootLogger"},
	} {
		l, err := LineOf(tt.version)
		if err != nil {
			t.Fatal(err)
		}
		g := l.BrokerLogging()
		if g.File != tt.file || g.JVMOption("/p/"+g.File) != tt.opt || !strings.Contains(g.Content, tt.content) {
			t.Errorf("%s: %s, %s, content has %q: %v", tt.version, g.File, g.JVMOption("/p/"+g.File), tt.content, strings.Contains(g.Content, tt.content))
		}
	}
}

func TestVersionOfTag(t *testing.T) {
	for tag, want := range map[string]string{"": DefaultVersion, "latest": DefaultVersion, "4.3.2": "4.3.2"} {
		if got := VersionOfTag(tag); got != want {
			t.Errorf("VersionOfTag(%q) = %q; want %q", tag, got, want)
		}
	}
}

func TestInCacheAndOpenLibs(t *testing.T) {
	cache := t.TempDir()
	libs := filepath.Join(cache, "4.3.2", "libs")
	if err := os.MkdirAll(libs, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := InCache(cache, "4.3.2"); !errors.Is(err, ErrNotFetched) || !strings.Contains(err.Error(), FetchCommand("4.3.2")) {
		t.Errorf("an unmarked fetch: %v; want ErrNotFetched naming %q", err, FetchCommand("4.3.2"))
	}
	if err := os.WriteFile(filepath.Join(libs, ".complete"), []byte("kafka.version=4.3.2\nargs=-Pkafka4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := InCache(cache, "4.3.2")
	if err != nil || d.LibsDir != libs {
		t.Errorf("InCache = %+v, %v", d, err)
	}
	if _, err := InCache(cache, "3.6.0"); !errors.Is(err, ErrUnknownLine) {
		t.Errorf("InCache of an unknown line: %v", err)
	}
	d, err = OpenLibs(libs)
	if err != nil || d.Version != "4.3.2" {
		t.Errorf("OpenLibs = %+v, %v; want version 4.3.2", d, err)
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"4.3.2", "4.4.0", -1}, {"4.4.0", "4.3.2", 1}, {"3.9.2", "4.0.1", -1}, {"4.10.0", "4.9.9", 1}, {"4.4.0", "4.4.0", 0},
	} {
		if got := CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
