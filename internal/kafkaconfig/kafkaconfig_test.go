package kafkaconfig

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestPropertyName(t *testing.T) {
	tests := []struct {
		env  string
		want string
		ok   bool
	}{
		{"KAFKA_NODE_ID", "node.id", true},
		{"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", "listener.security.protocol.map", true},
		{"KAFKA_LOG_DIRS", "log.dirs", true},
		{"KAFKA_CONFLUENT__SUPPORT", "confluent_support", true},
		{"KAFKA_LISTENER_NAME_INTERNAL_SASL__MECHANISM___X", "listener.name.internal.sasl_mechanism-x", true},
		{"KAFKA_a_B", "a.b", true},
		{"KAFKA_A____B", "a-.b", true}, // "...." -> "-." as the image does it
		{"KAFKA_FOO_KAFKA_BAR", "foo.kafka.bar", true},
		{"KAFKA_", "", true},
		{"KAFKA_HEAP_OPTS", "", false},
		{"KAFKA_OPTS", "", false},
		{"KAFKA_LOG4J_OPTS", "", false},
		{"KAFKA_JMX_OPTS", "", false},
		{"KAFKA_GC_LOG_OPTS", "", false},
		{"KAFKA_JVM_PERFORMANCE_OPTS", "", false},
		{"KAFKA_VERSION", "", false},
		{"KAFKA_DEBUG", "", false},
		{"KAFKA_LOG4J_ROOT_LOGLEVEL", "", false},
		{"KAFKA_LOG4J_LOGGERS", "", false},
		{"KAFKA_TOOLS_LOG4J_LOGLEVEL", "", false},
		{"KAFKA_JMX_HOSTNAME", "", false},
		{"KAFKA_JMX_PORT", "", false},
		{"CLUSTER_ID", "", false},
		{"kafka_node_id", "", false},
		{"MY_KAFKA_NODE_ID", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			got, ok := PropertyName(tt.env)
			if got != tt.want || ok != tt.ok {
				t.Errorf("PropertyName(%q) = %q, %v; want %q, %v", tt.env, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestEnvName(t *testing.T) {
	tests := []struct {
		property string
		want     string
		wantErr  string
	}{
		{property: "node.id", want: "KAFKA_NODE_ID"},
		{property: "log.dirs", want: "KAFKA_LOG_DIRS"},
		{property: "confluent_support", want: "KAFKA_CONFLUENT__SUPPORT"},
		{property: "listener.name.internal.sasl_mechanism-x", want: "KAFKA_LISTENER_NAME_INTERNAL_SASL__MECHANISM___X"},
		{property: "group.initial.rebalance.delay.ms", want: "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS"},
		{property: "", wantErr: "empty property name"},
		{property: "listener.name.INTERNAL.x", wantErr: "no environment variable maps"},
		{property: "a_.b", wantErr: "no environment variable maps"},
		{property: "heap.opts", wantErr: "no environment variable maps"},
	}
	for _, tt := range tests {
		t.Run(tt.property, func(t *testing.T) {
			got, err := EnvName(tt.property)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("EnvName(%q) = %q, %v; want error containing %q", tt.property, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("EnvName(%q) = %q, %v; want %q", tt.property, got, err, tt.want)
			}
			if back, _ := PropertyName(got); back != tt.property {
				t.Errorf("PropertyName(EnvName(%q)) = %q", tt.property, back)
			}
		})
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr string
	}{
		{
			name: "combined node",
			env: map[string]string{
				"KAFKA_NODE_ID":                        "1",
				"KAFKA_PROCESS_ROLES":                  "broker,controller",
				"KAFKA_LISTENERS":                      "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
				"KAFKA_ADVERTISED_LISTENERS":           "PLAINTEXT://127.0.0.1:9092",
				"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
				"KAFKA_HEAP_OPTS":                      "-Xmx512m",
				"KAFKA_OPTS":                           "-Dfoo=bar",
				"CLUSTER_ID":                           DefaultClusterID,
				"PATH":                                 "/usr/bin",
			},
			want: "advertised.listeners=PLAINTEXT://127.0.0.1:9092\n" +
				"listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n" +
				"listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093\n" +
				"node.id=1\n" +
				"process.roles=broker,controller\n",
		},
		{
			name: "listeners derived from advertised listeners",
			env: map[string]string{
				"KAFKA_PROCESS_ROLES":        "broker",
				"KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://kafka-0.kafka:9092,EXTERNAL://localhost:19092",
			},
			want: "advertised.listeners=PLAINTEXT://kafka-0.kafka:9092,EXTERNAL://localhost:19092\n" +
				"listeners=PLAINTEXT://0.0.0.0:9092,EXTERNAL://0.0.0.0:19092\n" +
				"process.roles=broker\n",
		},
		{
			name: "empty listeners are derived too",
			env: map[string]string{
				"KAFKA_LISTENERS":            "",
				"KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://a:1",
			},
			want: "advertised.listeners=PLAINTEXT://a:1\nlisteners=PLAINTEXT://0.0.0.0:1\n",
		},
		{
			name: "controller with an empty advertised listeners drops it",
			env: map[string]string{
				"KAFKA_PROCESS_ROLES":        "controller",
				"KAFKA_ADVERTISED_LISTENERS": "",
				"KAFKA_LISTENERS":            "CONTROLLER://127.0.0.1:9093",
			},
			want: "listeners=CONTROLLER://127.0.0.1:9093\nprocess.roles=controller\n",
		},
		{
			name: "controller with advertised listeners",
			env: map[string]string{
				"KAFKA_PROCESS_ROLES":        "controller",
				"KAFKA_ADVERTISED_LISTENERS": "CONTROLLER://127.0.0.1:9093",
			},
			wantErr: "not supported on a KRaft controller",
		},
		{
			name: "values are escaped",
			env: map[string]string{
				"KAFKA_SASL_JAAS_CONFIG": `x required username="a b" password="p#1\2";`,
				"KAFKA_SOME_TEXT":        " lead\nnext é",
			},
			want: `sasl.jaas.config=x required username="a b" password="p#1\\2";` + "\n" +
				`some.text=\ lead\nnext \u00E9` + "\n",
		},
		{
			name:    "no config variables",
			env:     map[string]string{"KAFKA_HEAP_OPTS": "-Xmx1g", "CLUSTER_ID": DefaultClusterID},
			wantErr: ErrNoConfig.Error(),
		},
		{
			name:    "conflicting variables",
			env:     map[string]string{"KAFKA_LOG_DIRS": "/a", "KAFKA_log_dirs": "/b"},
			wantErr: "KAFKA_LOG_DIRS and KAFKA_log_dirs both set log.dirs",
		},
		{
			name: "agreeing variables",
			env:  map[string]string{"KAFKA_LOG_DIRS": "/a", "KAFKA_log_dirs": "/a"},
			want: "log.dirs=/a\n",
		},
		{
			name:    "empty property name",
			env:     map[string]string{"KAFKA_": "x"},
			wantErr: "KAFKA_ maps to an empty property name",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props, err := Render(tt.env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Render() error = %v; want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render() error = %v", err)
			}
			if got := props.String(); got != tt.want {
				t.Errorf("Render() wrote\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestRenderNoConfigIsSentinel(t *testing.T) {
	_, err := Render(nil)
	if !errors.Is(err, ErrNoConfig) {
		t.Fatalf("Render(nil) error = %v; want ErrNoConfig", err)
	}
}

func TestClusterID(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{name: "unset", env: nil, want: DefaultClusterID},
		{name: "empty", env: map[string]string{"CLUSTER_ID": ""}, want: DefaultClusterID},
		{name: "set", env: map[string]string{"CLUSTER_ID": "2llBLpYqTFKdxR_VpHcvBQ"}, want: "2llBLpYqTFKdxR_VpHcvBQ"},
		{name: "too short", env: map[string]string{"CLUSTER_ID": "abc"}, wantErr: true},
		{name: "padded", env: map[string]string{"CLUSTER_ID": "2llBLpYqTFKdxR_VpHcvBQ=="}, wantErr: true},
		{name: "standard base64", env: map[string]string{"CLUSTER_ID": "2llBLpYqTFKdxR/VpHcvBQ"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ClusterID(tt.env)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ClusterID() = %q, %v; want %q, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestJVMOptions(t *testing.T) {
	def := func(extra ...string) []string {
		var out []string
		out = append(out, strings.Fields(DefaultHeapOpts)...)
		out = append(out, strings.Fields(DefaultJVMPerformanceOpts)...)
		out = append(out, strings.Fields(DefaultJMXOpts)...)
		return append(out, extra...)
	}
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{name: "defaults", env: nil, want: def()},
		{
			name: "all set",
			env: map[string]string{
				"KAFKA_HEAP_OPTS":            " -Xmx512m  -Xms128m ",
				"KAFKA_JVM_PERFORMANCE_OPTS": "-XX:+UseSerialGC",
				"KAFKA_GC_LOG_OPTS":          "-Xlog:gc",
				"KAFKA_JMX_OPTS":             "-Dj=1",
				"KAFKA_LOG4J_OPTS":           "-Dlog4j2.configurationFile=/x",
				"KAFKA_OPTS":                 "-Da=b -Dc=d",
			},
			want: []string{"-Xmx512m", "-Xms128m", "-XX:+UseSerialGC", "-Xlog:gc", "-Dj=1", "-Dlog4j2.configurationFile=/x", "-Da=b", "-Dc=d"},
		},
		{
			name: "jmx port",
			env:  map[string]string{"KAFKA_JMX_OPTS": "-Dj=1", "KAFKA_JMX_PORT": "9999", "KAFKA_HEAP_OPTS": "-Xmx1m", "KAFKA_JVM_PERFORMANCE_OPTS": "-server"},
			want: []string{"-Xmx1m", "-server", "-Dj=1", "-Djava.rmi.server.hostname=127.0.0.1", "-Dcom.sun.management.jmxremote.local.only=false", "-Dcom.sun.management.jmxremote.rmi.port=9999", "-Dcom.sun.management.jmxremote.port=9999"},
		},
		{
			name: "debug",
			env:  map[string]string{"KAFKA_DEBUG": "y", "JAVA_DEBUG_PORT": "127.0.0.1:5006", "KAFKA_OPTS": "-Dz=1"},
			want: def("-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:5006", "-Dz=1"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := JVMOptions(tt.env); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("JVMOptions() =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestJVMOptionsWithLogging(t *testing.T) {
	env := map[string]string{"KAFKA_HEAP_OPTS": "-Xmx1g", "KAFKA_LOG4J_OPTS": "-Dignored=1", "KAFKA_OPTS": "-Dlast=1"}
	logging := []string{"-Dkafka.logs.dir=/state dir/logs", "-Dlog4j2.configurationFile=/state dir/log4j2.properties"}
	got := JVMOptionsWithLogging(env, logging)
	i := slices.Index(got, logging[0])
	if i < 0 || i+1 >= len(got) || got[i+1] != logging[1] {
		t.Fatalf("options %q: want %q whole and in order", got, logging)
	}
	if slices.Contains(got, "-Dignored=1") {
		t.Errorf("options %q: KAFKA_LOG4J_OPTS is replaced by the logging given", got)
	}
	if got[len(got)-1] != "-Dlast=1" || slices.Index(got, "-Xmx1g") > i {
		t.Errorf("options %q: want the logging after the heap and before KAFKA_OPTS", got)
	}
	if plain := JVMOptions(env); !slices.Contains(plain, "-Dignored=1") {
		t.Errorf("JVMOptions %q: want KAFKA_LOG4J_OPTS", plain)
	}
}
