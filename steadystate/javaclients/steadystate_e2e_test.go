package javaclients_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/kafkachaos/kafkachaos/internal/localkafka/localkafkatest"
	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

// Limits of the run: 3 broker JVMs, 3 client JVMs and the load on 2 cores.
const (
	steadyClusterTimeout = 4 * time.Minute
	steadyRunTimeout     = 6 * time.Minute
)

// TestSteadyStateJava runs the steady state with Kafka's own Java clients
// beside it, as `kafkachaos steadystate --java-members 2 --java-protocol
// share` does against any cluster: a VerifiableProducer and a share group
// of two members as processes of this machine, every record checked, the
// verdict in the report. The share group is the protocol whose checks
// differ most; the classic and KIP-848 groups share the group checks that
// the suite's Java specs run as pods.
func TestSteadyStateJava(t *testing.T) {
	c, dist := localkafkatest.Start(t, steadyClusterTimeout)
	for _, protocol := range []string{javaclients.ShareProtocol} {
		t.Run(protocol, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), steadyRunTimeout)
			defer cancel()
			var stderr bytes.Buffer
			r, err := steadystate.New(steadystate.Config{
				Bootstrap: c.Bootstrap(), Topic: "java-steady-" + protocol, Rate: 200, Duration: 20 * time.Second,
				Java: steadystate.JavaConfig{Members: 2, Protocol: protocol, Libs: dist.LibsDir, Stderr: &stderr},
			})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := r.Run(ctx)
			if err != nil {
				t.Fatalf("run: %v; the tools' stderr:\n%s", err, tail(stderr.Bytes()))
			}
			checkJavaVerdict(t, rep, stderr.Bytes())
		})
	}
}

// checkJavaVerdict fails t unless rep holds a clean Java verdict of at
// least 1,000 acknowledged records (20 s at 200/s, less the JVMs' start),
// each read, and a passed java-anomalies bound.
func checkJavaVerdict(t *testing.T, rep *steadystate.Report, stderr []byte) {
	t.Helper()
	j := rep.Java
	if j == nil {
		t.Fatal("no Java verdict in the report")
	}
	acked, read := j.Group.Acked, j.Group.Consumed
	if s := j.Share; s != nil {
		acked, read = s.Acked, s.Delivered
	}
	t.Logf("java: acked %d, read %d; problems %q", acked, read, j.Problems())
	if p := j.Problems(); len(p) > 0 {
		t.Errorf("the Java clients' run found: %q; the tools' stderr:\n%s", p, tail(stderr))
	}
	if acked < 1000 || read < acked {
		t.Errorf("acked %d, read %d: want at least 1,000 acknowledged, each read", acked, read)
	}
	found := false
	for _, v := range rep.Verdicts {
		if v.Figures.Kind == steadystate.BoundJavaAnomalies {
			found = true
			if !v.Passed {
				t.Errorf("the Java verdict failed: %+v", v)
			}
		}
	}
	if !found {
		t.Error("the report has no Java verdict")
	}
}

// tail is the last 4 KiB of b.
func tail(b []byte) []byte {
	return b[max(0, len(b)-4<<10):]
}
