package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
	"github.com/kafkachaos/kafkachaos/steadystate"
)

// errUsage is wrapped by every error about bad flags: main exits 2 on it,
// before anything starts.
var errUsage = errors.New("bad flags")

// Bounds of the flags.
const (
	maxBrokers = 9
	// maxRecordSize keeps a record inside franz-go's 1,000,012-byte batch
	// and the brokers' message.max.bytes with room for the batch's own
	// bytes.
	maxRecordSize = 1_000_000
	// minRecordsPerRun is the fewest records a run sends, whatever the
	// size (see options.recordsAt).
	minRecordsPerRun = 10_000
	// maxRecords keeps recordsAt's arithmetic far from overflowing.
	maxRecords = 1_000_000_000
)

type options struct {
	// records is what a run sends at the smallest record size; a larger
	// size sends as many bytes (recordsAt).
	records     int64
	recordSizes []int
	brokers     int
	partitions  int32
	e2eCount    int
	e2eRate     int
	out         string
	version     string
}

// recordsAt returns how many records a run of size bytes sends: the bytes
// of --records at the smallest size, and at least minRecordsPerRun (or
// --records, if fewer), so that 10 KiB runs do not write 10 GB.
func (o options) recordsAt(size int) int64 {
	smallest := slices.Min(o.recordSizes)
	n := o.records * int64(smallest) / int64(size)
	return max(n, min(o.records, minRecordsPerRun))
}

// replication returns the topics' replication factor and
// min.insync.replicas: 3 and 2, or what fewer brokers allow.
func (o options) replication() (int16, int) {
	rf := min(3, o.brokers)
	return int16(rf), min(2, rf)
}

// parseOptions reads args (without the program name). Bad flags return an
// error wrapping errUsage, or flag.ErrHelp for -h; the flag package has
// written its own message and the usage to stderr by then, except for
// errors of the values' ranges.
func parseOptions(args []string, stderr io.Writer) (options, error) {
	o := options{recordSizes: []int{100, 1024, 10240}}
	fs := flag.NewFlagSet("perf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var partitions int
	fs.Int64Var(&o.records, "records", 1_000_000,
		fmt.Sprintf("records of each run at the smallest record size; larger sizes send as many bytes (at least %d records)", minRecordsPerRun))
	fs.Var((*sizesFlag)(&o.recordSizes), "record-sizes", "comma-separated record sizes in bytes; each gets its own runs")
	fs.IntVar(&o.brokers, "brokers", 3, fmt.Sprintf("brokers of the local KRaft cluster (1 to %d); topics have 3 replicas, or as many as there are brokers", maxBrokers))
	fs.IntVar(&partitions, "partitions", 6, "partitions of the benchmark topics")
	fs.IntVar(&o.e2eCount, "e2e-messages", 2000, "messages for EndToEndLatency and for our low-rate e2e run (at the smallest record size)")
	fs.IntVar(&o.e2eRate, "e2e-rate", 200, "records/s of our low-rate end-to-end run")
	fs.StringVar(&o.out, "out", "bench/results", "directory for the JSON result")
	fs.StringVar(&o.version, "kafka-version", kafkadist.DefaultVersion, "Kafka version of the fetched jars")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return options{}, err
		}
		return options{}, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("%w: unexpected arguments %q (every option is a flag)", errUsage, fs.Args())
	}
	bad := func(format string, a ...any) (options, error) {
		return options{}, fmt.Errorf("%w: "+format, append([]any{errUsage}, a...)...)
	}
	switch {
	case o.records < 1 || o.records > maxRecords:
		return bad("--records %d: need 1 to %d", o.records, maxRecords)
	case o.brokers < 1 || o.brokers > maxBrokers:
		return bad("--brokers %d: need 1 to %d", o.brokers, maxBrokers)
	case partitions < 1 || partitions > steadystate.MaxPartitions:
		return bad("--partitions %d: need 1 to %d", partitions, steadystate.MaxPartitions)
	case o.e2eCount <= 0:
		return bad("--e2e-messages %d: need at least 1", o.e2eCount)
	case o.e2eRate <= 0:
		return bad("--e2e-rate %d: need at least 1 record/s", o.e2eRate)
	case o.out == "":
		return bad("--out is empty: give a directory")
	case o.version == "":
		return bad("--kafka-version is empty")
	}
	o.partitions = int32(partitions)
	return o, nil
}

// sizesFlag is --record-sizes: distinct sizes from steadystate.HeaderSize
// to maxRecordSize.
type sizesFlag []int

func (f *sizesFlag) String() string {
	if f == nil {
		return ""
	}
	s := make([]string, len(*f))
	for i, v := range *f {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (f *sizesFlag) Set(v string) error {
	sizes, err := parseSizes(v)
	if err != nil {
		return err
	}
	*f = sizes
	return nil
}

// parseSizes reads a comma-separated list of record sizes.
func parseSizes(v string) ([]int, error) {
	var sizes []int
	for _, field := range strings.Split(v, ",") {
		field = strings.TrimSpace(field)
		n, err := strconv.Atoi(field)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%q is not a whole number of bytes", field)
		case n < steadystate.HeaderSize:
			return nil, fmt.Errorf("size %d is below %d, the kafkachaos header", n, steadystate.HeaderSize)
		case n > maxRecordSize:
			return nil, fmt.Errorf("size %d is over %d, which a 1 MB batch cannot hold", n, maxRecordSize)
		case slices.Contains(sizes, n):
			return nil, fmt.Errorf("size %d is given twice", n)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}
