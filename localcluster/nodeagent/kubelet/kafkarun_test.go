package kubelet

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

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

// A container that runs kafka-server-start.sh or kafka-storage.sh gets
// that script's mode with its arguments; no command, the image's launcher; another command is
// refused.
func TestKafkaRuntimeCommand(t *testing.T) {
	rt := kafkaRuntime{node: "/bin/kafkachaos-node", libs: "/libs", version: "3.9.2"}
	tests := []struct {
		name    string
		c       corev1.Container
		want    []string
		wantErr string
	}{
		{name: "the image's launcher", want: []string{"kafka-run", "--libs", "/libs", "--version", "3.9.2"}},
		{name: "the start script", c: corev1.Container{Command: []string{"/opt/kafka/bin/kafka-server-start.sh"}, Args: []string{"/etc/kafka/zk/server.properties", "--override", "broker.id=1"}},
			want: []string{"kafka-run", "--libs", "/libs", "--version", "3.9.2", "--script", "kafka-server-start.sh", "--", "/etc/kafka/zk/server.properties", "--override", "broker.id=1"}},
		{name: "the storage tool", c: corev1.Container{Command: []string{"/opt/kafka/bin/kafka-storage.sh", "format"}, Args: []string{"-c", "/etc/kafka/node-0.properties", "--ignore-formatted"}},
			want: []string{"kafka-run", "--libs", "/libs", "--version", "3.9.2", "--script", "kafka-storage.sh", "--", "format", "-c", "/etc/kafka/node-0.properties", "--ignore-formatted"}},
		{name: "a shell", c: corev1.Container{Command: []string{"sh", "-c", "kafka-server-start.sh x"}}, wantErr: "not \"sh\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, args, err := rt.command(tt.c)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("command = %s %q, %v; want an error containing %q", path, args, err, tt.wantErr)
				}
				return
			}
			if err != nil || path != "/bin/kafkachaos-node" || !slices.Equal(args, tt.want) {
				t.Fatalf("command = %s %q, %v; want %q", path, args, err, tt.want)
			}
		})
	}
}

// $(VAR) in a container's command and args takes the value of its env, as
// the kubelet expands it; $$ escapes, unknown references stay.
func TestWithExpandedArgs(t *testing.T) {
	c := withExpandedArgs(corev1.Container{
		Command: []string{"/opt/kafka/bin/kafka-server-start.sh"},
		Args:    []string{"cfg", "--override", "broker.id=$(POD_INDEX)", "zk=$(NS):2181", "$$(POD_INDEX)", "$(NOPE)"},
		Env:     []corev1.EnvVar{{Name: "POD_INDEX", Value: "2"}, {Name: "NS", Value: "kafka-zk"}},
	})
	want := []string{"cfg", "--override", "broker.id=2", "zk=kafka-zk:2181", "$(POD_INDEX)", "$(NOPE)"}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args = %q, want %q", c.Args, want)
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
