package kafkadist

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkachaos/kafkachaos/internal/properties"
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

func TestLoggingWithLevels(t *testing.T) {
	for _, tt := range []struct {
		name, version, root, loggers string
		want                         map[string]string // key: effective value
		absent                       []string          // keys that must not be set
	}{
		{name: "log4j2 unset", version: "4.4.0", want: map[string]string{"rootLogger.level": "INFO", "logger.controller.level": "WARN"}},
		{name: "log4j2 root and a known and a new logger, twice", version: "4.4.0", root: "WARN", loggers: "kafka.controller=TRACE, org.example=DEBUG,org.example=ERROR",
			want:   map[string]string{"rootLogger.level": "WARN", "logger.controller.level": "TRACE", "logger.kafkachaos1.name": "org.example", "logger.kafkachaos1.level": "ERROR"},
			absent: []string{"logger.kafkachaos2.name"}},
		{name: "log4j2 entry without a level is left out", version: "4.4.0", loggers: "kafka.controller",
			want: map[string]string{"logger.controller.level": "WARN"}, absent: []string{"logger.kafkachaos0.name"}},
		{name: "log4j 1, as the wrapper writes it", version: "3.9.2", root: "ERROR", loggers: "kafka.controller=TRACE,org.example=DEBUG,,org.bare",
			want: map[string]string{"log4j.rootLogger": "ERROR, stdout", "log4j.logger.kafka.controller": "TRACE", "log4j.logger.org.example": "DEBUG", "log4j.logger.org.bare": ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := LineOf(tt.version)
			if err != nil {
				t.Fatal(err)
			}
			g := l.BrokerLogging().WithLevels(tt.root, tt.loggers)
			// Read as java.util.Properties does: the last of a key wins.
			props, err := properties.Read(strings.NewReader(g.Content))
			if err != nil {
				t.Fatal(err)
			}
			got := props.Map()
			for k, v := range tt.want {
				if gv, ok := got[k]; !ok || gv != v {
					t.Errorf("%s = %q (set: %t), want %q", k, gv, ok, v)
				}
			}
			for _, k := range tt.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s is set", k)
				}
			}
		})
	}
}
