package steadystate

import (
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Metric names one latency the workload measures.
type Metric int

const (
	// PublishDelay is intended send time -> actual send (the schedule's lag).
	PublishDelay Metric = iota
	// AckLatency is actual send -> acknowledgement.
	AckLatency
	// Response is intended send time -> acknowledgement: the latency a
	// client of a fixed-rate service sees, free of coordinated omission.
	Response
	// EndToEnd is intended send time -> consumed.
	EndToEnd

	numMetrics
)

var metricNames = [numMetrics]string{"publishDelay", "ack", "response", "e2e"}

func (m Metric) String() string {
	if m < 0 || m >= numMetrics {
		return fmt.Sprintf("Metric(%d)", int(m))
	}
	return metricNames[m]
}

// MarshalText names m, so that JSON maps keyed by Metric read
// {"ack": ...}.
func (m Metric) MarshalText() ([]byte, error) {
	if m < 0 || m >= numMetrics {
		return nil, fmt.Errorf("steadystate: unknown metric %d", int(m))
	}
	return []byte(metricNames[m]), nil
}

// UnmarshalText parses a metric name as String prints it.
func (m *Metric) UnmarshalText(b []byte) error {
	for i, n := range metricNames {
		if n == string(b) {
			*m = Metric(i)
			return nil
		}
	}
	return fmt.Errorf("steadystate: unknown metric %q", b)
}

// counts are what a recorder counts in one second.
type counts struct {
	Sent       int64
	Acked      int64
	AckedBytes int64
	Consumed   int64
	Errors     map[string]int64
}

func (c *counts) add(o counts) {
	c.Sent += o.Sent
	c.Acked += o.Acked
	c.AckedBytes += o.AckedBytes
	c.Consumed += o.Consumed
	for k, n := range o.Errors {
		if c.Errors == nil {
			c.Errors = make(map[string]int64)
		}
		c.Errors[k] += n
	}
}

// sealedSecond is one finished second of one recorder.
type sealedSecond struct {
	sec    int64
	counts counts
	hists  [numMetrics]SparseHistogram
}

// Gap is a span of time in which a producer got no acknowledgement.
type Gap struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// recorder collects metrics for one goroutine. It is never shared, so
// recording takes no locks. When an event falls in a new second, the previous
// second is sealed into a compact form; reports merge the seconds of every
// recorder after the run.
type recorder struct {
	start time.Time
	sec   int64
	cur   counts
	hists [numMetrics]*hdr.Histogram
	used  [numMetrics]bool

	sealed []sealedSecond

	// Gaps between acknowledgements of at least gapMin; nil for recorders
	// that see no acknowledgements.
	gaps *gapTracker
}

func newRecorder(start time.Time, gapMin time.Duration) *recorder {
	r := &recorder{start: start}
	if gapMin > 0 {
		r.gaps = newGapTracker(start, gapMin)
	}
	for m := range r.hists {
		r.hists[m] = newHist()
	}
	return r
}

// at moves the recorder to the second of t, sealing the current one if t is
// in a later second.
func (r *recorder) at(t time.Time) {
	s := int64(t.Sub(r.start) / time.Second)
	if s <= r.sec {
		return // same second, or a straggler counted in the current one
	}
	r.seal()
	r.sec = s
}

func (r *recorder) seal() {
	ss := sealedSecond{sec: r.sec, counts: r.cur}
	empty := r.cur.Sent == 0 && r.cur.Acked == 0 && r.cur.Consumed == 0 && len(r.cur.Errors) == 0
	for m, h := range r.hists {
		if r.used[m] {
			ss.hists[m] = sparseOf(h)
			h.Reset()
			r.used[m] = false
			empty = false
		}
	}
	if !empty {
		r.sealed = append(r.sealed, ss)
	}
	r.cur = counts{}
}

func (r *recorder) latency(m Metric, d time.Duration) {
	recordDur(r.hists[m], d)
	r.used[m] = true
}

// sent records a send at t that was intended at intended.
func (r *recorder) sent(intended, t time.Time) {
	r.at(t)
	r.cur.Sent++
	r.latency(PublishDelay, t.Sub(intended))
}

// acked records an acknowledgement at t of a record of size bytes.
func (r *recorder) acked(intended, sent, t time.Time, size int) {
	r.at(t)
	r.cur.Acked++
	r.cur.AckedBytes += int64(size)
	r.latency(AckLatency, t.Sub(sent))
	r.latency(Response, t.Sub(intended))
	if r.gaps != nil {
		r.gaps.ack(t)
	}
}

// failed records a produce error of the given kind at t.
func (r *recorder) failed(kind string, t time.Time) {
	r.at(t)
	if r.cur.Errors == nil {
		r.cur.Errors = make(map[string]int64)
	}
	r.cur.Errors[kind]++
}

// consumed records a consumed record at t that was intended at intended.
func (r *recorder) consumed(intended, t time.Time) {
	r.at(t)
	r.cur.Consumed++
	r.latency(EndToEnd, t.Sub(intended))
}

// finish seals the current second and closes the last gap at end. The
// recorder must not be used after.
func (r *recorder) finish(end time.Time) {
	r.seal()
	if r.gaps != nil {
		r.gaps.finish(end)
	}
}
