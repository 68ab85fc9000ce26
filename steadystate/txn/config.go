package txn

import (
	"fmt"
	"time"
)

// Settings is what a user chooses of the transactional workload.
type Settings struct {
	// Producers is how many transactional IDs write; 0 runs none.
	Producers int `json:"producers,omitempty"`
	// Rate is transactions per second, over all producers.
	Rate int `json:"rate,omitempty"`
	// Records is each transaction's record count, over as many
	// consecutive partitions.
	Records int `json:"records,omitempty"`
	// AbortEvery: every AbortEvery-th transaction of a producer is
	// aborted on purpose.
	AbortEvery int `json:"abortEvery,omitempty"`
	// Copiers is how many members the copy job's group has (0: no copy
	// job).
	Copiers int `json:"copiers,omitempty"`
	// Stall, when set, makes producer 0 a zombie every StallEvery-th
	// transaction: after its writes it holds the transaction open for
	// Stall before it tries to commit. Stall must outlast Timeout and
	// Kafka's AbortInterval, so the coordinator must have aborted it and
	// bumped the epoch: the commit must be refused.
	Stall      time.Duration `json:"stall,omitempty"`
	StallEvery int           `json:"stallEvery,omitempty"`
	// Timeout is the producers' transaction timeout (franz-go's default
	// is 40 s; Java's transaction.timeout.ms 60 s).
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Defaults, exported for flags and docs.
const (
	DefaultProducers  = 3
	DefaultRate       = 20
	DefaultRecords    = 4
	DefaultAbortEvery = 5
	DefaultTimeout    = 40 * time.Second
	DefaultStallEvery = 10
	// AbortInterval is Kafka's transaction.abort.timed.out.transaction.
	// cleanup.interval.ms (10 s by default): how late past its timeout the
	// coordinator may abort a transaction.
	AbortInterval = 10 * time.Second
	maxProducers  = 64
	maxRecords    = 1000
)

// WithDefaults fills the zero values of a workload that runs.
func (s Settings) WithDefaults() Settings {
	if s.Producers == 0 {
		return s
	}
	if s.Rate == 0 {
		s.Rate = DefaultRate
	}
	if s.Records == 0 {
		s.Records = DefaultRecords
	}
	if s.AbortEvery == 0 {
		s.AbortEvery = DefaultAbortEvery
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.Stall > 0 && s.StallEvery == 0 {
		s.StallEvery = DefaultStallEvery
	}
	return s
}

// Validate judges settings after WithDefaults.
func (s Settings) Validate() error {
	switch {
	case s.Producers < 0 || s.Producers > maxProducers:
		return fmt.Errorf("transactional producers %d: need 0 to %d", s.Producers, maxProducers)
	case s.Copiers < 0 || s.Copiers > maxProducers:
		return fmt.Errorf("copiers %d: need 0 to %d", s.Copiers, maxProducers)
	case s.Producers == 0 && s.Copiers > 0:
		return fmt.Errorf("copiers %d without transactional producers: the copy job runs beside them", s.Copiers)
	case s.Producers == 0:
		return nil
	case s.Rate < 1:
		return fmt.Errorf("transaction rate %d: need at least 1 per second", s.Rate)
	case s.Records < 1 || s.Records > maxRecords:
		return fmt.Errorf("records per transaction %d: need 1 to %d", s.Records, maxRecords)
	case s.AbortEvery < 2:
		return fmt.Errorf("abort every %d: need at least 2, so that some transactions commit", s.AbortEvery)
	case s.Timeout < time.Second:
		return fmt.Errorf("transaction timeout %s: need at least 1s", s.Timeout)
	case s.Stall < 0 || s.Stall > 0 && s.Stall <= s.Timeout+AbortInterval:
		return fmt.Errorf("stall %s: 0, or more than the transaction timeout %s and Kafka's abort interval %s together, so the coordinator must abort it", s.Stall, s.Timeout, AbortInterval)
	case s.Stall > 0 && s.StallEvery < 1:
		return fmt.Errorf("stall every %d: need at least 1", s.StallEvery)
	}
	return nil
}

// StuckAfter is how long an acknowledged commit may take to become
// visible before the last stable offset counts as stuck: a producer paused
// in a transaction may pin it for its timeout, and the coordinator aborts
// within AbortInterval after that; 5 s more for the reader's fetch.
func (s Settings) StuckAfter() time.Duration { return s.Timeout + AbortInterval + 5*time.Second }
