package launcher

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kafkachaos/kafkachaos/internal/kafkaconfig"
	"github.com/kafkachaos/kafkachaos/internal/properties"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
)

func TestStartScriptProps(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(cfg, []byte("listeners=PLAINTEXT://:9092\nbroker.id=0\nlog.dirs=/var/lib/kafka/data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		want    map[string]string
		wantErr string
	}{
		{name: "the file alone", args: []string{cfg}, want: map[string]string{"broker.id": "0", "listeners": "PLAINTEXT://:9092"}},
		{name: "overrides win", args: []string{cfg, "--override", "broker.id=2", "--override", "zookeeper.connect=zk-0:2181,zk-1:2181/kafka"},
			want: map[string]string{"broker.id": "2", "zookeeper.connect": "zk-0:2181,zk-1:2181/kafka", "log.dirs": "/var/lib/kafka/data"}},
		{name: "no config", args: nil, wantErr: "usage"},
		{name: "daemon", args: []string{"-daemon", cfg}, wantErr: "foreground"},
		{name: "missing file", args: []string{cfg + ".nope"}, wantErr: "no such file"},
		{name: "a stray argument", args: []string{cfg, "broker.id=1"}, wantErr: "only --override"},
		{name: "an override without a value", args: []string{cfg, "--override"}, wantErr: "only --override"},
		{name: "an override without =", args: []string{cfg, "--override", "broker.id"}, wantErr: "want KEY=VALUE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props, err := startScriptProps(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("startScriptProps(%q) = %v, %v; want an error containing %q", tt.args, props, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				if got, _ := props.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

// The image's launcher appends its kafka.jsa to KAFKA_JVM_PERFORMANCE_OPTS,
// so kafka-run-class.sh's G1 defaults apply only when the user set them.
func TestLauncherEnv(t *testing.T) {
	const jsa = "/cache/kafka/4.4.0/kafka.jsa"
	tests := []struct {
		name string
		env  map[string]string
		jsa  string
		want []string // the JVM options that JVMOptions gives
		not  []string // options it must not give
	}{
		{name: "no user options: the archive alone, no G1 defaults", env: map[string]string{}, jsa: jsa,
			want: []string{"-XX:SharedArchiveFile=" + jsa}, not: []string{"-XX:MaxGCPauseMillis=20"}},
		{name: "the user's options, then the archive", env: map[string]string{"KAFKA_JVM_PERFORMANCE_OPTS": "-XX:+UseZGC"}, jsa: jsa,
			want: []string{"-XX:+UseZGC", "-XX:SharedArchiveFile=" + jsa}, not: []string{"-XX:+UseG1GC"}},
		{name: "no archive: the scripts' defaults", env: map[string]string{}, jsa: "",
			want: []string{"-XX:MaxGCPauseMillis=20"}, not: []string{"-XX:SharedArchiveFile=" + jsa}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := maps.Clone(tt.env)
			opts := kafkaconfig.JVMOptions(launcherEnv(tt.env, tt.jsa))
			if !maps.Equal(before, tt.env) {
				t.Errorf("launcherEnv changed its input: %v, was %v", tt.env, before)
			}
			for _, w := range tt.want {
				if !slices.Contains(opts, w) {
					t.Errorf("options %q lack %s", opts, w)
				}
			}
			for _, n := range tt.not {
				if slices.Contains(opts, n) {
					t.Errorf("options %q have %s", opts, n)
				}
			}
		})
	}
}

func TestWriteLogging(t *testing.T) {
	levels := map[string]string{"KAFKA_LOG4J_ROOT_LOGLEVEL": "WARN", "KAFKA_LOG4J_LOGGERS": "kafka.controller=TRACE"}
	for _, tt := range []struct {
		name     string
		env      map[string]string
		launcher bool
		wantOpts []string // "" stands for the written file's option
		has, not []string // lines the written file has, has not
	}{
		{name: "the image's launcher applies the levels", env: levels, launcher: true, wantOpts: []string{""},
			has: []string{"rootLogger.level = WARN", "logger.controller.level = TRACE"}},
		{name: "a distribution script does not", env: levels, launcher: false, wantOpts: []string{""},
			not: []string{"rootLogger.level = WARN", "logger.controller.level = TRACE"}},
		{name: "the user's KAFKA_LOG4J_OPTS wins", env: map[string]string{"KAFKA_LOG4J_OPTS": " -Dlog4j2.configurationFile=/etc/kafka/log4j2.yaml  -Dx=y "}, launcher: true,
			wantOpts: []string{"-Dlog4j2.configurationFile=/etc/kafka/log4j2.yaml", "-Dx=y"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := newBrokerLaunch(t.TempDir(), "4.4.0", append([]string{nodeagent.PodIPEnv + "=127.1.0.9", nodeagent.PodDirEnv + "=" + t.TempDir()}, envList(tt.env)...))
			if err != nil {
				t.Fatal(err)
			}
			opts, err := l.writeLogging(tt.launcher)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(l.dir(), "log4j2.properties")
			want := []string{"-Dkafka.logs.dir=" + filepath.Join(l.dir(), "logs")}
			for _, o := range tt.wantOpts {
				if o == "" {
					o = "-Dlog4j2.configurationFile=" + file
				}
				want = append(want, o)
			}
			if !slices.Equal(opts, want) {
				t.Fatalf("options %q, want %q", opts, want)
			}
			// exec writes server.properties there next, whatever the
			// logging options are.
			if st, err := os.Stat(l.dir()); err != nil || !st.IsDir() {
				t.Fatalf("the launcher's directory after writeLogging: %v", err)
			}
			raw, _ := os.ReadFile(file)
			for _, h := range tt.has {
				if !strings.Contains(string(raw), h) {
					t.Errorf("the written config lacks %q", h)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(string(raw), n) {
					t.Errorf("the written config has %q", n)
				}
			}
		})
	}
}

func envList(env map[string]string) []string {
	var out []string
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func TestAnyFormatted(t *testing.T) {
	root := t.TempDir()
	formatted, empty := filepath.Join(root, "formatted"), filepath.Join(root, "empty")
	for _, d := range []string{formatted, empty} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(formatted, "meta.properties"), []byte("version=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		props map[string]string
		want  bool
	}{
		{"none", map[string]string{"log.dirs": empty}, false},
		{"the only dir", map[string]string{"log.dirs": formatted}, true},
		// The image's format refuses when any dir is formatted (a lost
		// first disk of two is not formatted by it).
		{"the second of two", map[string]string{"log.dirs": empty + ", " + formatted}, true},
		{"log.dir", map[string]string{"log.dir": formatted}, true},
		{"the metadata log dir", map[string]string{"log.dirs": empty, "metadata.log.dir": formatted}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := anyFormatted(properties.NewProperties(tt.props)); got != tt.want {
				t.Errorf("anyFormatted(%v) = %t, want %t", tt.props, got, tt.want)
			}
		})
	}
}

func TestBindTo(t *testing.T) {
	tests := []struct{ in, want string }{
		{"PLAINTEXT://:9092,CONTROLLER://:9093", "PLAINTEXT://127.1.0.7:9092,CONTROLLER://127.1.0.7:9093"},
		{"PLAINTEXT://0.0.0.0:9092", "PLAINTEXT://127.1.0.7:9092"},
		{"PLAINTEXT://kafka-0.example:9092", "PLAINTEXT://kafka-0.example:9092"},
	}
	for _, tt := range tests {
		if got := bindTo(tt.in, "127.1.0.7"); got != tt.want {
			t.Errorf("bindTo(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
