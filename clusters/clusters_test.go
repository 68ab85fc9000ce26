package clusters

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkachaos/kafkachaos/clusters/clusterstest"
)

func TestLoadRESTConfig(t *testing.T) {
	tests := []struct {
		name       string
		files      map[string]string // path under $HOME -> server
		flag       string            // under $HOME
		env        string            // under $HOME, ":"-separated
		context    string
		wantServer string
		wantErr    string
	}{
		{name: "flag", files: map[string]string{"a": "https://a", ".kube/config": "https://home"}, flag: "a", wantServer: "https://a"},
		{name: "flag names a missing file", files: map[string]string{".kube/config": "https://home"}, flag: "nope", wantErr: "kubeconfig "},
		{name: "env", files: map[string]string{"b": "https://b", ".kube/config": "https://home"}, env: "missing:b", wantServer: "https://b"},
		{name: "env names no file", files: map[string]string{".kube/config": "https://home"}, env: "missing", wantErr: "$KUBECONFIG"},
		{name: "home", files: map[string]string{".kube/config": "https://home", ".kafkachaos/local/kubeconfig": "https://local"}, wantServer: "https://home"},
		{name: "local cluster", files: map[string]string{".kafkachaos/local/kubeconfig": "https://local"}, wantServer: "https://local"},
		{name: "none", wantErr: ".kafkachaos/local/kubeconfig"},
		{name: "unknown context", files: map[string]string{".kube/config": "https://home"}, context: "nope", wantErr: "nope"},
		{name: "not a kubeconfig", files: map[string]string{"bad": ""}, flag: "bad", wantErr: "kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			for p, server := range tt.files {
				if server == "" {
					if err := os.WriteFile(filepath.Join(home, p), []byte("{not yaml"), 0o600); err != nil {
						t.Fatal(err)
					}
					continue
				}
				clusterstest.WriteKubeconfig(t, filepath.Join(home, p), server)
			}
			var env []string
			for _, p := range strings.Split(tt.env, ":") {
				if p != "" {
					env = append(env, filepath.Join(home, p))
				}
			}
			t.Setenv("KUBECONFIG", strings.Join(env, string(os.PathListSeparator)))
			flag := ""
			if tt.flag != "" {
				flag = filepath.Join(home, tt.flag)
			}
			cfg, err := LoadRESTConfig(flag, tt.context)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrNoKubeconfig) {
					t.Fatalf("err = %v, want ErrNoKubeconfig saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.wantServer {
				t.Errorf("server %q, want %q", cfg.Host, tt.wantServer)
			}
		})
	}
}
