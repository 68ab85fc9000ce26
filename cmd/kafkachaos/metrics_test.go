package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/steadystate/metrics"
)

// metricLine is how the text format writes a counter without labels.
func metricLine(name string, v uint64) string { return fmt.Sprintf("\n%s %d\n", name, v) }

var metricsOn = regexp.MustCompile(`metrics: serving (http://\S+)`)

// A standalone run with --metrics-addr serves /metrics, and with
// --metrics-linger keeps serving the final values, which are the report's,
// until a signal.
func TestSteadyStateServesMetrics(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	report := filepath.Join(t.TempDir(), "report.json")
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	exit := make(chan int, 1)
	go func() {
		exit <- run([]string{"steadystate", "--bootstrap", strings.Join(c.ListenAddrs(), ","), "--partitions", "3",
			"--rate", "2000", "--num-records", "2000", "--report", report,
			"--metrics-addr", "127.0.0.1:0", "--metrics-linger", "2m"}, stdout, stderr)
	}()
	exited := func() {
		select {
		case code := <-exit:
			t.Fatalf("exited with %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
		default:
		}
	}
	url := waitFor(t, "the metrics address", func() (string, bool) {
		exited()
		m := metricsOn.FindStringSubmatch(stderr.String())
		if m == nil {
			return "no 'metrics: serving' line on stderr yet", false
		}
		return m[1], true
	})
	if !strings.HasSuffix(url, metrics.Path) {
		t.Errorf("metrics served at %s, not at %s", url, metrics.Path)
	}
	waitFor(t, "the run to end and the metrics to linger", func() (string, bool) {
		exited()
		return stderr.String(), strings.Contains(stderr.String(), "serving the final values")
	})

	raw, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep steadystate.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %s (%v)", url, resp.Status, err)
	}
	for _, line := range []string{
		metricLine(metrics.RecordsAcked, rep.Records.Acked),
		metricLine(metrics.RecordsConsumed, rep.Records.Consumed),
		metricLine(metrics.RecordsLost, 0),
		fmt.Sprintf("\n%s{phase=%q} 1\n", metrics.CurrentPhase, steadystate.PhaseBaseline),
	} {
		if !strings.Contains(string(body), line) {
			t.Errorf("no line %q in the final metrics (report: %+v):\n%.3000s", strings.TrimSpace(line), rep.Records, body)
		}
	}

	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-exit:
		if code != exitOK {
			t.Errorf("exit %d after the signal ended the linger, want 0\nstderr: %s", code, stderr.String())
		}
	case <-time.After(agentWait):
		t.Fatalf("a signal did not end --metrics-linger\nstderr: %s", stderr.String())
	}
}
