package zkconfig

import (
	"reflect"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	defaults := "dataDir=/data\ndataLogDir=/datalog\ntickTime=2000\ninitLimit=5\nsyncLimit=2\n" +
		"autopurge.snapRetainCount=3\nautopurge.purgeInterval=0\nmaxClientCnxns=60\n" +
		"standaloneEnabled=true\nadmin.enableServer=true\n"
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"image defaults", nil, defaults + "server.1=localhost:2888:3888;2181\n"},
		{"empty servers take the default", map[string]string{"ZOO_SERVERS": ""}, defaults + "server.1=localhost:2888:3888;2181\n"},
		// [[ -z $ZOO_SERVERS ]] is false for blanks, and the loop finds no word.
		{"blank servers give none", map[string]string{"ZOO_SERVERS": " "}, defaults},
		{"every variable", map[string]string{
			"ZOO_DATA_DIR": "/var/lib/zookeeper/data", "ZOO_DATA_LOG_DIR": "/var/lib/zookeeper/log",
			"ZOO_TICK_TIME": "1000", "ZOO_INIT_LIMIT": "10", "ZOO_SYNC_LIMIT": "4",
			"ZOO_AUTOPURGE_SNAPRETAINCOUNT": "5", "ZOO_AUTOPURGE_PURGEINTERVAL": "24",
			"ZOO_MAX_CLIENT_CNXNS": "0", "ZOO_STANDALONE_ENABLED": "false", "ZOO_ADMINSERVER_ENABLED": "false",
			"ZOO_SERVERS":                "server.1=zk-0:2888:3888;2181\n server.2=zk-1:2888:3888;2181\tserver.3=zk-2:2888:3888:observer;2181",
			"ZOO_4LW_COMMANDS_WHITELIST": "srvr,mntr,ruok",
			"ZOO_CFG_EXTRA":              "metricsProvider.exportJvmInfo=false  #comment quorumListenOnAllIPs:false",
			"ZOO_MY_ID":                  "2", "ZOO_CONF_DIR": "/conf2", "ZOO_LOG_DIR": "/logs2", // not in zoo.cfg
		}, "dataDir=/var/lib/zookeeper/data\ndataLogDir=/var/lib/zookeeper/log\ntickTime=1000\ninitLimit=10\nsyncLimit=4\n" +
			"autopurge.snapRetainCount=5\nautopurge.purgeInterval=24\nmaxClientCnxns=0\n" +
			"standaloneEnabled=false\nadmin.enableServer=false\n" +
			"server.1=zk-0:2888:3888;2181\nserver.2=zk-1:2888:3888;2181\nserver.3=zk-2:2888:3888:observer;2181\n" +
			"4lw.commands.whitelist=srvr,mntr,ruok\n" +
			"metricsProvider.exportJvmInfo=false\nquorumListenOnAllIPs=false\n"},
		{"set but empty stays empty, as in the image", map[string]string{"ZOO_TICK_TIME": "", "ZOO_4LW_COMMANDS_WHITELIST": ""},
			strings.Replace(defaults, "tickTime=2000", "tickTime=", 1) + "server.1=localhost:2888:3888;2181\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Render(tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.String(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no election port", map[string]string{"ZOO_SERVERS": "server.1=zk-0:2888;2181"}, "is not host:peerPort:electionPort"},
		{"bad id", map[string]string{"ZOO_SERVERS": "server.a=zk-0:2888:3888;2181"}, `server ID "a" is not a decimal number`},
		{"bad port", map[string]string{"ZOO_SERVERS": "server.1=zk-0:2888:38x8;2181"}, "election port"},
		{"bad client port", map[string]string{"ZOO_SERVERS": "server.1=zk-0:2888:3888;zk-0:99999"}, "client port"},
		{"same ports", map[string]string{"ZOO_SERVERS": "server.1=zk-0:2888:2888;2181"}, "must differ"},
		{"bad role", map[string]string{"ZOO_SERVERS": "server.1=zk-0:2888:3888:leader;2181"}, "neither participant nor observer"},
		{"two semicolons", map[string]string{"ZOO_SERVERS": "server.1=zk-0:2888:3888;2181;2182"}, "more than one ';'"},
		{"duplicate id", map[string]string{"ZOO_SERVERS": "server.1=a:2888:3888;2181 server.01=b:2888:3888;2181"}, "server 1 is given twice"},
		{"bad extra server", map[string]string{"ZOO_CFG_EXTRA": "server.4=zk-3"}, "ZOO_CFG_EXTRA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(tt.env)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v; want it to say %q", err, tt.want)
			}
		})
	}
}

func TestParseServer(t *testing.T) {
	tests := []struct {
		line string
		want Server
	}{
		{"server.1=zk-0.zk:2888:3888;2181", Server{ID: 1, Addrs: []Addr{{Host: "zk-0.zk", PeerPort: 2888, ElectionPort: 3888}}, ClientPort: 2181}},
		{"server.12=10.0.0.1:2888:3888:Observer;0.0.0.0:2181", Server{ID: 12,
			Addrs: []Addr{{Host: "10.0.0.1", PeerPort: 2888, ElectionPort: 3888, Role: "Observer"}}, ClientHost: "0.0.0.0", ClientPort: 2181}},
		{"server.3=zk-2:2888:3888", Server{ID: 3, Addrs: []Addr{{Host: "zk-2", PeerPort: 2888, ElectionPort: 3888}}}},
		{"server.4=[::1]:2888:3888:participant;[::1]:2181", Server{ID: 4,
			Addrs: []Addr{{Host: "::1", PeerPort: 2888, ElectionPort: 3888, Role: "participant"}}, ClientHost: "::1", ClientPort: 2181}},
		{"server.5=a:2888:3888|b:2889:3889;2181", Server{ID: 5,
			Addrs: []Addr{{Host: "a", PeerPort: 2888, ElectionPort: 3888}, {Host: "b", PeerPort: 2889, ElectionPort: 3889}}, ClientPort: 2181}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			k, v, _ := strings.Cut(tt.line, "=")
			s, err := ParseServer(k, v)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s, tt.want) {
				t.Errorf("got %+v, want %+v", s, tt.want)
			}
			if s.String() != tt.line {
				t.Errorf("writes back as %q", s.String())
			}
		})
	}
	for _, bad := range []string{"server.1=", "server.1=:2888:3888", "server.1=[::1:2888:3888", "server.1=a:2888:3888:observer|b:2889:3889",
		"server.1=a:2888:3888;:2181", "server.1=a:2888:3888;a:b:2181", "server.-1=a:2888:3888", "server.1=a:0:3888"} {
		k, v, _ := strings.Cut(bad, "=")
		if _, err := ParseServer(k, v); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}

func TestConfigEdits(t *testing.T) {
	c, err := Render(map[string]string{"ZOO_SERVERS": "server.1=a:2888:3888;2181 server.2=b:2888:3888;2181", "ZOO_CFG_EXTRA": "tickTime=500"})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get("tickTime"); v != "500" {
		t.Errorf("tickTime %q; want the last line's", v)
	}
	servers, err := c.Servers()
	if err != nil || len(servers) != 2 {
		t.Fatalf("servers %v, %v", servers, err)
	}
	own := servers[1]
	own.Addrs[0].Host, own.ClientHost = "127.0.0.9", "127.0.0.9"
	d := c.WithServer(own).With("admin.serverAddress", "127.0.0.9").With("tickTime", "700")
	want := "server.2=127.0.0.9:2888:3888;127.0.0.9:2181\n"
	if !strings.Contains(d.String(), want) || !strings.Contains(d.String(), "server.1=a:2888:3888;2181\n") {
		t.Errorf("got\n%s\nwant %q and server.1 as it was", d, want)
	}
	if v, _ := d.Get("admin.serverAddress"); v != "127.0.0.9" {
		t.Errorf("admin.serverAddress %q", v)
	}
	if strings.Count(d.String(), "tickTime=700") != 2 {
		t.Errorf("With did not set every tickTime line:\n%s", d)
	}
	if c.String() == d.String() {
		t.Errorf("the edits changed the original")
	}
}

func TestMyID(t *testing.T) {
	tests := []struct {
		env     map[string]string
		want    int64
		wantErr string
	}{
		{nil, 1, ""},
		{map[string]string{"ZOO_MY_ID": ""}, 1, ""},
		{map[string]string{"ZOO_MY_ID": "12"}, 12, ""},
		{map[string]string{"ZOO_MY_ID": "one"}, 0, "not a decimal number"},
		{map[string]string{"ZOO_MY_ID": "-1"}, 0, "not a decimal number"},
		{map[string]string{"ZOO_MY_ID": "1 "}, 0, "not a decimal number"},
		{map[string]string{"ZOO_MY_ID": "99999999999999999999"}, 0, "out of range"},
	}
	for _, tt := range tests {
		got, err := MyID(tt.env)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "ZOO_MY_ID") {
				t.Errorf("MyID(%v) = %d, %v; want an error saying %q", tt.env, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("MyID(%v) = %d, %v; want %d", tt.env, got, err, tt.want)
		}
	}
}

func TestJVMOptions(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want []string
	}{
		{nil, []string{"-Xmx1000m"}},
		{map[string]string{"ZK_SERVER_HEAP": "256", "SERVER_JVMFLAGS": "-Da=1  -Db=2", "JVMFLAGS": "-Xmx512m"},
			[]string{"-Xmx256m", "-Da=1", "-Db=2", "-Xmx512m"}},
		{map[string]string{"ZK_SERVER_HEAP": ""}, []string{"-Xmx1000m"}},
	}
	for _, tt := range tests {
		if got := JVMOptions(tt.env); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("JVMOptions(%v) = %q; want %q", tt.env, got, tt.want)
		}
	}
}
