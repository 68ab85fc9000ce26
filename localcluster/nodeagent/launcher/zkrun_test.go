package launcher

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkachaos/kafkachaos/internal/zkconfig"
	"github.com/kafkachaos/kafkachaos/localcluster/nodeagent"
)

func TestBindToPod(t *testing.T) {
	const ip = "127.0.0.77"
	tests := []struct {
		name      string
		env       map[string]string
		myID      int64
		want      []string // lines the result must hold
		wantNot   []string // lines it must not
		wantFound bool
	}{
		{"image defaults", nil, 1,
			[]string{"server.1=" + ip + ":2888:3888;" + ip + ":2181", "admin.serverAddress=" + ip}, []string{"localhost"}, true},
		{"ensemble member", map[string]string{"ZOO_SERVERS": "server.10=zk-0.zk:2888:3888;2181 server.11=zk-1.zk:2888:3888;2181 server.12=zk-2.zk:2888:3888:observer;2181"}, 12,
			[]string{"server.10=zk-0.zk:2888:3888;2181", "server.11=zk-1.zk:2888:3888;2181", "server.12=" + ip + ":2888:3888:observer;" + ip + ":2181"}, nil, true},
		{"explicit client host kept", map[string]string{"ZOO_SERVERS": "server.1=zk-0:2888:3888;127.0.0.1:2181"}, 1,
			[]string{"server.1=" + ip + ":2888:3888;127.0.0.1:2181"}, nil, true},
		{"wildcard client host", map[string]string{"ZOO_SERVERS": "server.1=zk-0:2888:3888;0.0.0.0:2181"}, 1,
			[]string{"server.1=" + ip + ":2888:3888;" + ip + ":2181"}, nil, true},
		{"old style with clientPort", map[string]string{"ZOO_SERVERS": "server.1=zk-0:2888:3888", "ZOO_CFG_EXTRA": "clientPort=2181 secureClientPort=2281 admin.serverAddress=0.0.0.0 quorumListenOnAllIPs=true"}, 1,
			[]string{"server.1=" + ip + ":2888:3888", "clientPortAddress=" + ip, "secureClientPortAddress=" + ip, "admin.serverAddress=" + ip, "quorumListenOnAllIPs=false"},
			[]string{"admin.serverAddress=0.0.0.0", "quorumListenOnAllIPs=true"}, true},
		{"explicit addresses kept", map[string]string{"ZOO_CFG_EXTRA": "clientPort=2181 clientPortAddress=127.0.0.1 admin.serverAddress=127.0.0.1"}, 1,
			[]string{"clientPortAddress=127.0.0.1", "admin.serverAddress=127.0.0.1"}, nil, true},
		{"no entry for myid", map[string]string{"ZOO_SERVERS": "server.1=zk-0:2888:3888;2181"}, 2,
			[]string{"server.1=zk-0:2888:3888;2181", "admin.serverAddress=" + ip}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := zkconfig.Render(tt.env)
			if err != nil {
				t.Fatal(err)
			}
			got, found, err := bindToPod(cfg, tt.myID, ip)
			if err != nil || found != tt.wantFound {
				t.Fatalf("found %v, %v; want %v", found, err, tt.wantFound)
			}
			lines := "\n" + got.String()
			for _, w := range tt.want {
				if !strings.Contains(lines, "\n"+w+"\n") {
					t.Errorf("no line %q in\n%s", w, got)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(lines, w) {
					t.Errorf("%q in\n%s", w, got)
				}
			}
		})
	}
}

func TestEnsureMyID(t *testing.T) {
	dir := t.TempDir()
	id, err := ensureMyID(dir, map[string]string{"ZOO_MY_ID": "12"})
	if err != nil || id != 12 {
		t.Fatalf("first start: %d, %v", id, err)
	}
	if raw, _ := os.ReadFile(filepath.Join(dir, "myid")); string(raw) != "12\n" {
		t.Errorf("myid %q", raw)
	}
	// Written only if absent: a later start keeps the file's ID.
	if id, err := ensureMyID(dir, map[string]string{"ZOO_MY_ID": "3"}); err != nil || id != 12 {
		t.Errorf("restart: %d, %v; want the file's 12", id, err)
	}
	if _, err := ensureMyID(t.TempDir(), map[string]string{"ZOO_MY_ID": "x"}); err == nil || !strings.Contains(err.Error(), "ZOO_MY_ID") {
		t.Errorf("bad ZOO_MY_ID: %v", err)
	}
	if _, err := ensureMyID(filepath.Join(dir, "missing"), nil); err == nil || !strings.Contains(err.Error(), "does not exist in its volume") {
		t.Errorf("missing data dir: %v", err)
	}
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "myid"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ensureMyID(bad, nil); err == nil || !strings.Contains(err.Error(), "myid") {
		t.Errorf("bad myid file: %v", err)
	}
}

func TestContainerDirs(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		mounts  []string
		want    [2]string // ZOO_DATA_DIR, ZOO_DATA_LOG_DIR; a leading "layer:" is under the layer
		wantErr string
	}{
		{"defaults, no mount", nil, nil, [2]string{"layer:data", "layer:datalog"}, ""},
		{"defaults mounted", nil, []string{"/data", "/datalog"}, [2]string{"/data", "/datalog"}, ""},
		{"default data mounted only", nil, []string{"/data"}, [2]string{"/data", "layer:datalog"}, ""},
		{"exactly a mount", map[string]string{"ZOO_DATA_DIR": "/var/lib/zookeeper/data", "ZOO_DATA_LOG_DIR": "/var/lib/zookeeper/log"},
			[]string{"/var/lib/zookeeper/data", "/var/lib/zookeeper/log"}, [2]string{"/var/lib/zookeeper/data", "/var/lib/zookeeper/log"}, ""},
		{"under a mount", map[string]string{"ZOO_DATA_DIR": "/var/lib/zookeeper/data", "ZOO_DATA_LOG_DIR": "/var/lib/zookeeper/log/txn"},
			[]string{"/var/lib/zookeeper"}, [2]string{"/var/lib/zookeeper/data", "/var/lib/zookeeper/log/txn"}, ""},
		{"mount given uncleaned", map[string]string{"ZOO_DATA_DIR": "/var/lib/zookeeper/data/"},
			[]string{"/var/lib//zookeeper/"}, [2]string{"/var/lib/zookeeper/data", "layer:datalog"}, ""},
		{"sibling with a common prefix", map[string]string{"ZOO_DATA_DIR": "/data2", "ZOO_DATA_LOG_DIR": "/var/lib/zookeeper/data2"},
			[]string{"/data", "/var/lib/zookeeper/data"}, [2]string{"layer:data2", "layer:var/lib/zookeeper/data2"}, ""},
		{"mount under the path", map[string]string{"ZOO_DATA_DIR": "/var/lib/zookeeper"},
			[]string{"/var/lib/zookeeper/data"}, [2]string{"layer:var/lib/zookeeper", "layer:datalog"}, ""},
		{"no mount at all", map[string]string{"ZOO_DATA_DIR": "/var/lib/zookeeper", "ZOO_DATA_LOG_DIR": "/var/log/zookeeper"},
			nil, [2]string{"layer:var/lib/zookeeper", "layer:var/log/zookeeper"}, ""},
		{"dot-dots cleaned first", map[string]string{"ZOO_DATA_DIR": "/var/lib/zookeeper/../../../data"},
			[]string{"/var/lib/zookeeper"}, [2]string{"layer:data", "layer:datalog"}, ""},
		{"relative mount never matches", map[string]string{"ZOO_DATA_DIR": "/data"},
			[]string{"data"}, [2]string{"layer:data", "layer:datalog"}, ""},
		{"relative path", map[string]string{"ZOO_DATA_DIR": "data"}, []string{"/data"}, [2]string{}, "ZOO_DATA_DIR"},
		{"empty path", map[string]string{"ZOO_DATA_LOG_DIR": ""}, nil, [2]string{}, "ZOO_DATA_LOG_DIR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			layer := filepath.Join(t.TempDir(), "zookeeper", "image")
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = v
			}
			err := containerDirs(env, tt.mounts, layer)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v; want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, name := range []string{"ZOO_DATA_DIR", "ZOO_DATA_LOG_DIR"} {
				want := tt.want[i]
				if rel, ok := strings.CutPrefix(want, "layer:"); ok {
					want = filepath.Join(layer, rel)
					if st, err := os.Stat(want); err != nil || !st.IsDir() {
						t.Errorf("%s: layer dir %s not created: %v", name, want, err)
					}
				}
				if env[name] != want {
					t.Errorf("%s = %q; want %q", name, env[name], want)
				}
			}
		})
	}
}

func TestZooKeeperRunNeedsPodEnv(t *testing.T) {
	err := ZooKeeperRun("/libs", nil, []string{"ZOO_MY_ID=1"})
	if err == nil || !strings.Contains(err.Error(), nodeagent.PodIPEnv) {
		t.Errorf("err %v; want it to name %s", err, nodeagent.PodIPEnv)
	}
}

func TestZooKeeperClasspath(t *testing.T) {
	libs := t.TempDir()
	for _, j := range []string{"logback-classic-1.2.13.jar", "slf4j-reload4j-1.7.36.jar", "zookeeper-3.8.4.jar"} {
		if err := os.WriteFile(filepath.Join(libs, j), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := filepath.Join(libs, "slf4j-reload4j-1.7.36.jar") + ":" + filepath.Join(libs, "*")
	if got := classpath(libs); got != want {
		t.Errorf("classpath %q; want %q", got, want)
	}
}
