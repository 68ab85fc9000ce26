package suites

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzConfigLoad: any config file is loaded or refused with ErrBadConfig
// (the suite's exit code 2), never a panic.
func FuzzConfigLoad(f *testing.F) {
	for _, seed := range []string{
		"steadyState: {rate: 500}\ntiming: {hold: 30s}\nbounds: {maxUnavailable: 5s}\n",
		"target: {layout: separate-controllers, kafkaVersion: 3.9.2}\nupgrade: {from: 4.3.2}\n",
		"target:\n  kubeconfig: /nonexistent\n  namespace: k\n  bootstrap: [a:9092]\n  security: {securityProtocol: SASL_SSL, saslMechanism: PLAIN, saslUsername: u}\n",
		"steadyState: {agents: 3, requestTimeout: -1s}\n",
		"timing: {warmup: 99999999999h}\n",
		"bounds: {minThroughputRatioAfter: .nan}\n",
		"- a list\n",
		"steadyState: {rate: 1e99}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := (&flagValues{config: path}).load()
		if err != nil && !errors.Is(err, ErrBadConfig) {
			t.Fatalf("a bad config is refused with an error that is not ErrBadConfig: %v", err)
		}
	})
}
