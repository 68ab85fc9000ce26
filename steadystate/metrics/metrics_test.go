package metrics

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// scrape GETs url and decodes the metric families it serves, asking for
// the protobuf format (which carries native histograms) when protobuf is
// set, else for the text format.
func scrape(t *testing.T, url string, protobuf bool) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	accept := expfmt.NewFormat(expfmt.TypeTextPlain)
	if protobuf {
		accept = expfmt.NewFormat(expfmt.TypeProtoDelim)
	}
	req.Header.Set("Accept", string(accept))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	format := expfmt.ResponseFormat(resp.Header)
	if got := format.FormatType(); got != accept.FormatType() {
		t.Fatalf("scrape: served %q, asked for %q", format, accept)
	}
	dec := expfmt.NewDecoder(resp.Body, format)
	out := make(map[string]*dto.MetricFamily)
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("scrape: decode: %v", err)
		}
		out[mf.GetName()] = &mf
	}
}

// value returns the value of the counter or gauge name whose labels include
// labels (name=value pairs); ok is false when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (v float64, ok bool) {
	mf := fams[name]
	if mf == nil {
		return 0, false
	}
	for _, m := range mf.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

func hasLabels(m *dto.Metric, pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == pairs[i] && l.GetValue() == pairs[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// histogram returns the one histogram of family name.
func histogram(t *testing.T, fams map[string]*dto.MetricFamily, name string) *dto.Histogram {
	t.Helper()
	mf := fams[name]
	if mf == nil || len(mf.GetMetric()) != 1 || mf.GetMetric()[0].Histogram == nil {
		t.Fatalf("no histogram %s in the scrape", name)
	}
	return mf.GetMetric()[0].Histogram
}

// want checks that counter or gauge name (with labels) is w.
func want(t *testing.T, fams map[string]*dto.MetricFamily, w float64, name string, labels ...string) {
	t.Helper()
	got, ok := value(fams, name, labels...)
	if !ok {
		t.Errorf("%s%v: not in the scrape", name, labels)
	} else if got != w {
		t.Errorf("%s%v = %g, want %g", name, labels, got, w)
	}
}

// A real run against kfake, its metrics scraped over HTTP while it runs and
// after: the counters and histograms count what the report counts.
func TestMetricsMatchTheReport(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m := New()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	url := srv.URL + Path

	const records = 3000
	r, err := steadystate.New(steadystate.Config{
		Bootstrap: c.ListenAddrs(), Partitions: 3, Rate: 1500, NumRecords: records,
		DrainTimeout: 30 * time.Second, Observer: m,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	type result struct {
		rep *steadystate.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := r.Run(ctx)
		done <- result{rep, err}
	}()

	// While it runs.
	select {
	case <-r.Started():
	case res := <-done:
		t.Fatalf("the run ended before it started: %v", res.err)
	}
	deadline := time.Now().Add(time.Minute)
	for p := r.Progress(); p.Acked < 300 && time.Now().Before(deadline); p = r.Progress() {
		time.Sleep(20 * time.Millisecond)
	}
	during := scrape(t, url, false)
	acked, _ := value(during, RecordsAcked)
	sent, _ := value(during, RecordsSent)
	if acked <= 0 || acked > sent || sent > records {
		t.Errorf("while running: %g acked of %g sent; want some acked, no more than sent, at most %d sent", acked, sent, records)
	}
	want(t, during, 1, CurrentPhase, "phase", string(steadystate.PhaseBaseline))
	r.Mark(steadystate.PhaseFault)
	marked := scrape(t, url, false)
	want(t, marked, 1, CurrentPhase, "phase", string(steadystate.PhaseFault))
	want(t, marked, 0, CurrentPhase, "phase", string(steadystate.PhaseBaseline))
	if u, ok := value(marked, UnavailableSeconds); !ok || u < 0 || u > 5 {
		t.Errorf("%s = %g (exported: %t) while a healthy fake acks; want between 0 and 5 s", UnavailableSeconds, u, ok)
	}

	res := <-done
	if res.err != nil {
		t.Fatalf("Run: %v", res.err)
	}
	rep := res.rep
	rec := rep.Records
	if rec.Acked != records || !rec.Clean() {
		t.Fatalf("the run itself went wrong: %+v", rec)
	}

	// After it: text for the counters and classic buckets, protobuf for the
	// native histograms.
	after := scrape(t, url, false)
	want(t, after, float64(rec.Acked), RecordsAcked)
	want(t, after, float64(rec.Acked), RecordsSent)
	want(t, after, float64(rec.Consumed), RecordsConsumed)
	want(t, after, float64(rec.Lost), RecordsLost)
	want(t, after, float64(rec.Duplicates), RecordsDuplicated)
	want(t, after, float64(rec.Reordered), RecordsReordered)
	for _, kind := range steadystate.FailureKinds() {
		want(t, after, 0, RecordsFailed, "kind", kind)
	}
	want(t, after, 0, UnavailableSeconds) // nothing waits for an ack any more
	want(t, after, 1, CurrentPhase, "phase", string(steadystate.PhaseFault))

	native := scrape(t, url, true)
	for _, h := range []struct {
		name  string
		stats steadystate.LatencyStats
	}{
		{AckLatency, rep.Latency[steadystate.AckLatency.String()]},
		{EndToEndLatency, rep.Latency[steadystate.EndToEnd.String()]},
	} {
		classic, nat := histogram(t, after, h.name), histogram(t, native, h.name)
		if classic.GetSampleCount() != uint64(h.stats.Count) || nat.GetSampleCount() != uint64(h.stats.Count) {
			t.Errorf("%s counts %d (classic) and %d (native); the report's %d", h.name, classic.GetSampleCount(), nat.GetSampleCount(), h.stats.Count)
		}
		// The text format lists +Inf as a bucket of its own.
		buckets := classic.GetBucket()
		if n := len(buckets); n != len(latencyBuckets())+1 || !math.IsInf(buckets[n-1].GetUpperBound(), 1) || buckets[n-1].GetCumulativeCount() != uint64(h.stats.Count) {
			t.Errorf("%s has %d classic buckets, want %d and +Inf holding every value", h.name, len(buckets), len(latencyBuckets())+1)
		}
		if nat.GetSchema() != 3 || len(nat.GetPositiveSpan()) == 0 {
			t.Errorf("%s: native schema %d with %d spans; want schema 3 (factor 2^(1/8) <= 1.1) and buckets", h.name, nat.GetSchema(), len(nat.GetPositiveSpan()))
		}
		// The mean in seconds is the report's in µs, within the
		// HdrHistogram's precision.
		mean := classic.GetSampleSum() / float64(classic.GetSampleCount()) * 1e6
		if math.Abs(mean-h.stats.Mean) > 0.01*h.stats.Mean+5 {
			t.Errorf("%s: mean %.1f µs, the report's %.1f µs", h.name, mean, h.stats.Mean)
		}
	}
}

// A run's failures, anomalies and loss land in their counters.
func TestObserverEvents(t *testing.T) {
	m := New()
	t0 := time.Now()
	m.Sent(t0)
	m.Sent(t0)
	m.Sent(t0)
	if u := m.Unavailable(t0.Add(2 * time.Second)); u != 2*time.Second {
		t.Errorf("unavailable %s 2 s after three sends with no ack, want 2s", u)
	}
	m.Acked(t0.Add(time.Second), time.Second)
	if u := m.Unavailable(t0.Add(3 * time.Second)); u != 2*time.Second {
		t.Errorf("unavailable %s 2 s after the last ack with two records waiting, want 2s", u)
	}
	m.Failed(t0.Add(4*time.Second), steadystate.FailureRecordTimeout)
	m.Failed(t0.Add(4*time.Second), steadystate.FailureKafka)
	if u := m.Unavailable(t0.Add(5 * time.Second)); u != 0 {
		t.Errorf("unavailable %s with no record waiting, want 0", u)
	}
	m.Sent(t0.Add(10 * time.Second))
	if u := m.Unavailable(t0.Add(10*time.Second + time.Millisecond)); u != time.Millisecond {
		t.Errorf("unavailable %s 1 ms after a send that followed an idle spell, want 1ms", u)
	}
	m.Duplicate()
	m.Reordered()
	m.Reordered()
	m.Lost(7)
	for _, c := range []struct {
		name string
		want float64
		got  float64
	}{
		{RecordsDuplicated, 1, testutil.ToFloat64(m.duplicated)},
		{RecordsReordered, 2, testutil.ToFloat64(m.reordered)},
		{RecordsLost, 7, testutil.ToFloat64(m.lost)},
		{RecordsFailed + `{kind="record_timeout"}`, 1, testutil.ToFloat64(m.failed.WithLabelValues(steadystate.FailureRecordTimeout))},
		{RecordsFailed + `{kind="kafka"}`, 1, testutil.ToFloat64(m.failed.WithLabelValues(steadystate.FailureKafka))},
	} {
		if c.got != c.want {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
}

// The names and help follow Prometheus's conventions, as promlint checks them.
func TestMetricsLint(t *testing.T) {
	m := New()
	m.Phase(steadystate.PhaseBaseline)
	problems, err := testutil.GatherAndLint(m.Gatherer())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}
