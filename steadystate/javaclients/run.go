package javaclients

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kafkachaos/kafkachaos/internal/kafkadist"
)

// The tools' main classes, in Kafka's tools jar.
const (
	ProducerClass = kafkadist.VerifiableProducerClass
	ConsumerClass = kafkadist.VerifiableConsumerClass
	// ShareConsumerClass is a share group's member (KIP-932).
	ShareConsumerClass = kafkadist.VerifiableShareConsumerClass
	// CopierClass is Kafka's TransactionalMessageCopier: consume-transform-
	// produce, the input offsets committed in each transaction; it prints
	// only progress counts.
	CopierClass = "org.apache.kafka.tools.TransactionalMessageCopier"
)

// ProducerSettings are the producer's settings, as applications run it:
// idempotent, acks=all, retrying until delivery.timeout.ms. The tool
// itself sets retries=0, which turns idempotence off; its
// --producer.config wins. Everything else is the Java client's default.
const ProducerSettings = "enable.idempotence=true\nacks=all\nretries=2147483647\nmax.in.flight.requests.per.connection=5\n"

// ProducerKeys is how many keys the producer's records cycle through
// (--repeating-keys), as applications key theirs, so that every
// partition is written all the time.
const ProducerKeys = 1000

// ProducerArgs are the VerifiableProducer's arguments: rate records/s
// into topic, its values prefixed with prefix (each incarnation its own:
// the tool counts from 0 in each process), keyed over ProducerKeys, with
// the settings file config (ProducerSettings).
func ProducerArgs(bootstrap []string, topic string, rate int, prefix, config string) []string {
	return []string{"--bootstrap-server", strings.Join(bootstrap, ","), "--topic", topic, "--throughput", fmt.Sprint(rate),
		"--value-prefix", prefix, "--repeating-keys", fmt.Sprint(ProducerKeys), "--producer.config", config}
}

// ConsumerArgs are a member's arguments, with --verbose so that it reports
// each record: a VerifiableConsumer's on protocol (classic or consumer),
// committing after each poll (the tool's default), or, with ShareProtocol,
// a VerifiableShareConsumer's, acknowledging implicitly (the tool's and
// the client's default), with the group's share.auto.offset.reset set to
// earliest before it subscribes.
func ConsumerArgs(bootstrap []string, topic, group, protocol string) []string {
	args := []string{"--bootstrap-server", strings.Join(bootstrap, ","), "--topic", topic, "--group-id", group, "--verbose"}
	if protocol == ShareProtocol {
		return append(args, "--offset-reset-strategy", "earliest")
	}
	return append(args, "--group-protocol", protocol)
}

// ConsumerClassOf is the main class of a member on protocol.
func ConsumerClassOf(protocol string) string {
	if protocol == ShareProtocol {
		return ShareConsumerClass
	}
	return ConsumerClass
}

// Command is a tool's command line: java with Kafka's jars in libsDir on
// its class path, the tool's main class, and its arguments.
func Command(ctx context.Context, java, libsDir, class string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, java, append([]string{"-Xmx256m", "-cp", filepath.Join(libsDir, "*"), class}, args...)...)
}

// maxLine bounds one event line (a record_data line carries a value).
const maxLine = 4 << 20

// Read calls fn with each event of r, a tool's standard output, until it
// ends; lines that are not events (log lines) are skipped. It returns the
// reader's error, if any.
func Read(r io.Reader, fn func(Event)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		e, err := Parse(sc.Bytes())
		if errors.Is(err, ErrNotEvent) {
			continue
		}
		fn(e)
	}
	if err := sc.Err(); err != nil {
		_, _ = io.Copy(io.Discard, r) // the tool must not block on a full pipe
		return fmt.Errorf("javaclients: reading a tool's events: %w", err)
	}
	return nil
}
