package kafkadist

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	root := t.TempDir()
	libs := filepath.Join(root, LibsPath("9.9.9"))
	if err := os.MkdirAll(libs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(libs, ".complete"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		dir     string
		version string
		want    string
		wantErr error
	}{
		{name: "at the root", dir: root, version: "9.9.9", want: libs},
		{name: "from a subdirectory", dir: deep, version: "9.9.9", want: libs},
		{name: "other version", dir: deep, version: "9.9.8", wantErr: ErrNotFetched},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(tt.dir)
			d, err := Find(tt.version)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), "make kafka-dist") {
					t.Fatalf("Find() error = %v; want %v naming make kafka-dist", err, tt.wantErr)
				}
				return
			}
			if err != nil || d.LibsDir != tt.want || d.Classpath() != filepath.Join(tt.want, "*") {
				t.Fatalf("Find() = %+v, %v; want libs %s", d, err, tt.want)
			}
		})
	}
}

func TestSharedArchive(t *testing.T) {
	root := t.TempDir()
	d := Dist{Version: "9.9.9", LibsDir: filepath.Join(root, "libs")}
	if got := d.SharedArchive(); got != "" {
		t.Fatalf("SharedArchive() without kafka.jsa = %q; want \"\"", got)
	}
	jsa := filepath.Join(root, "kafka.jsa")
	if err := os.WriteFile(jsa, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := d.SharedArchive(); got != jsa {
		t.Fatalf("SharedArchive() = %q; want %q", got, jsa)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open("9.9.9", dir); !errors.Is(err, ErrNotFetched) {
		t.Fatalf("Open(incomplete) error = %v; want ErrNotFetched", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := Open("9.9.9", dir); err != nil || d.LibsDir != dir {
		t.Fatalf("Open(complete) = %+v, %v", d, err)
	}
}

func TestLog4j2Configs(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"broker", BrokerLog4j2(), []string{"rootLogger.level = INFO", "target = SYSTEM_OUT", "logger.request.level = WARN"}},
		{"tools", ToolsLog4j2(), []string{"rootLogger.level = WARN", "target = SYSTEM_ERR"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !strings.Contains(tt.text, w) {
					t.Errorf("config lacks %q", w)
				}
			}
		})
	}
}
