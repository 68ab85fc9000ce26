package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kafkachaos/kafkachaos/steadystate"
)

// Recovery holds a spec's recovery times, as scenario.Run measures them. A
// time the spec did not get to measure (it ended first) is the zero
// Duration and is left out of report.json.
type Recovery struct {
	// ToPodsReady: from the fault's recovery until the victims are Ready
	// pods again.
	ToPodsReady Duration `json:"toPodsReady,omitzero"`
	// ToHealthy: from the fault's recovery until the cluster is healthy.
	ToHealthy Duration `json:"toHealthy,omitzero"`
	// InjectToHealthy: from the fault's injection until the cluster is
	// healthy.
	InjectToHealthy Duration `json:"injectToHealthy,omitzero"`
	// ThroughputBack: from the fault's recovery until throughput is back
	// to the baseline's (see ThroughputBack).
	ThroughputBack Duration `json:"throughputBack,omitzero"`
	// From the fault's recovery until, in the event timeline's looks at
	// Kafka: every broker registered and unfenced; every ISR full; every
	// partition led by its preferred (first) replica.
	ToBrokersRegistered Duration `json:"toBrokersRegistered,omitzero"`
	ToISRFull           Duration `json:"toISRFull,omitzero"`
	ToPreferredLeaders  Duration `json:"toPreferredLeaders,omitzero"`
}

// recoveryTime is one of Recovery's times, with its JSON key and what it
// times.
type recoveryTime struct {
	key, what string
	d         Duration
}

// times lists r's times in order.
func (r Recovery) times() []recoveryTime {
	return []recoveryTime{
		{"toPodsReady", "victims Ready, after the fault was recovered", r.ToPodsReady},
		{"toHealthy", "cluster healthy, after the fault was recovered", r.ToHealthy},
		{"injectToHealthy", "cluster healthy, after the fault was injected", r.InjectToHealthy},
		{"throughputBack", "throughput back to the baseline's, after the fault was recovered", r.ThroughputBack},
		{"toBrokersRegistered", "every broker registered and unfenced, after the fault was recovered", r.ToBrokersRegistered},
		{"toISRFull", "every ISR full, after the fault was recovered", r.ToISRFull},
		{"toPreferredLeaders", "every partition led by its preferred replica, after the fault was recovered", r.ToPreferredLeaders},
	}
}

// String lists the measured times by their JSON keys: "toPodsReady 3.4s,
// toHealthy never".
func (r Recovery) String() string {
	var s []string
	for _, t := range r.times() {
		if t.d.Measured() {
			s = append(s, t.key+" "+t.d.String())
		}
	}
	return strings.Join(s, ", ")
}

// Duration is one recovery time: how long until what it times happened,
// or that it never did. In report.json it is a time.Duration string
// ("1.234s"), or null when it never happened (reports before schema 2 say
// "never"). The zero Duration was not measured.
type Duration struct {
	d     time.Duration
	state reach
}

type reach uint8

const (
	unmeasured reach = iota
	reached
	never
)

// Reached returns the Duration of what happened after d, to the
// millisecond.
func Reached(d time.Duration) Duration {
	return Duration{d: d.Round(time.Millisecond), state: reached}
}

// Never returns the Duration of what did not happen.
func Never() Duration { return Duration{state: never} }

// Value returns how long it took; false when it never happened or was not
// measured.
func (d Duration) Value() (time.Duration, bool) { return d.d, d.state == reached }

// IsNever says that what d times did not happen.
func (d Duration) IsNever() bool { return d.state == never }

// Measured says that d was measured: reached or never.
func (d Duration) Measured() bool { return d.state != unmeasured }

// IsZero says that d was not measured; report.json leaves it out.
func (d Duration) IsZero() bool { return !d.Measured() }

// String is "1.234s", "never", or "-" when d was not measured.
func (d Duration) String() string {
	switch d.state {
	case reached:
		return d.d.String()
	case never:
		return "never"
	}
	return "-"
}

// MarshalJSON writes a time.Duration string, or null for Never (and for a
// Duration that was not measured, which Recovery leaves out).
func (d Duration) MarshalJSON() ([]byte, error) {
	if d.state != reached {
		return []byte("null"), nil
	}
	return json.Marshal(d.d.String())
}

// UnmarshalJSON reads a time.Duration string, or null or "never" as Never.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = Never()
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("report: recovery time %s: %w", b, err)
	}
	if s == "never" {
		*d = Never()
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("report: recovery time: %w", err)
	}
	*d = Duration{d: v, state: reached}
	return nil
}

// ThroughputBack is Recovery.ThroughputBack: how long after since the
// acked records/s got back to ratio times the baseline's, or Never.
func ThroughputBack(rep *steadystate.Report, since time.Time, ratio float64) Duration {
	if d, ok := rep.ThroughputBackAfter(since, ratio); ok {
		return Reached(d)
	}
	return Never()
}
