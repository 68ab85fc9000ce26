package steadystate

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

// JavaTopicSuffix names the Java clients' topic after the workload's:
// their records are not the load's, whose verifier would not know them.
const JavaTopicSuffix = "-java"

// DefaultJavaRate is the Java producer's records/s unless set.
const DefaultJavaRate = 200

// maxJavaMembers bounds the Java group: each member is a JVM.
const maxJavaMembers = 16

// JavaConfig runs Kafka's own Java clients beside the load, as processes
// of this machine (javaclients.Local): a VerifiableProducer and a group of
// Members on Protocol, on the topic Topic+JavaTopicSuffix.
type JavaConfig struct {
	Members  int
	Protocol string // classic (default), consumer (KIP-848) or share (KIP-932)
	Rate     int    // the producer's records/s; default DefaultJavaRate
	Libs     string // a Kafka distribution's libs directory, with the tools jar
	Java     string // the java command; default "java"
	// Stderr gets the tools' log lines; nil drops them.
	Stderr io.Writer
}

// withDefaults fills what j leaves unset.
func (j JavaConfig) withDefaults() JavaConfig {
	if j.Members > 0 {
		if j.Protocol == "" {
			j.Protocol = GroupProtocolClassic
		}
		if j.Rate == 0 {
			j.Rate = DefaultJavaRate
		}
	}
	return j
}

// validate says what is wrong in j: a Kafka libs directory without the
// tools jar is caught here, before anything is touched.
func (j JavaConfig) validate() error {
	switch {
	case j.Members < 0 || j.Members > maxJavaMembers:
		return fmt.Errorf("java members %d: need 0 to %d", j.Members, maxJavaMembers)
	case j.Members == 0:
		return nil
	case j.Protocol != GroupProtocolClassic && j.Protocol != GroupProtocolConsumer && j.Protocol != javaclients.ShareProtocol:
		return fmt.Errorf("java group protocol %q: want %s, %s or %s", j.Protocol, GroupProtocolClassic, GroupProtocolConsumer, javaclients.ShareProtocol)
	case j.Rate < 1:
		return fmt.Errorf("java rate %d: need at least 1 record/s", j.Rate)
	}
	tools, _ := filepath.Glob(filepath.Join(j.Libs, "kafka-tools-*.jar"))
	if j.Libs == "" || len(tools) == 0 {
		return fmt.Errorf("java libs %q: want a Kafka distribution's libs directory, with kafka-tools-<version>.jar (its VerifiableProducer and VerifiableConsumer)", j.Libs)
	}
	return nil
}

// javaRun is the running Java clients, and what they need at the end.
type javaRun struct {
	local *javaclients.Local
	dir   string
}

// startJava creates the Java clients' topic, with the workload topic's
// settings, starts their group at its end offsets (a consumer group's
// committed first; a share group's from the earliest record, the records
// before the ends not the run's), and starts them.
func (r *Runner) startJava(ctx context.Context, adm *kadm.Client) (*javaRun, error) {
	c := r.cfg
	topic := c.Topic + JavaTopicSuffix
	parts, start, err := r.topicAtEnd(ctx, adm, topic)
	if err != nil {
		return nil, err
	}
	group := fmtGroup(c.RunID, c.ProducerBase) + JavaTopicSuffix
	v := javaclients.NewVerifier(topic, r.start, start)
	if c.Java.Protocol == javaclients.ShareProtocol {
		limit, err := javaclients.DeliveryLimit(ctx, adm)
		if err != nil {
			return nil, err
		}
		v = javaclients.NewShareVerifier(topic, r.start, start, limit)
	} else if err := commitStart(ctx, adm, group, topic, start); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kafkachaos-java-")
	if err != nil {
		return nil, fmt.Errorf("steadystate: java: %w", err)
	}
	l, err := javaclients.StartLocal(ctx, javaclients.LocalConfig{
		Java: c.Java.Java, Libs: c.Java.Libs, Bootstrap: c.Bootstrap, Topic: topic, Group: group,
		Protocol: c.Java.Protocol, Members: c.Java.Members, Rate: c.Java.Rate, Dir: dir, Stderr: c.Java.Stderr,
	}, v, adm, int(parts))
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("steadystate: java: %w", err)
	}
	return &javaRun{local: l, dir: dir}, nil
}

// finish stops the Java clients, drains their group, and returns its
// verdict.
func (j *javaRun) finish(ctx context.Context, adm *kadm.Client, timeout time.Duration) *javaclients.Result {
	res := j.local.Finish(ctx, adm, timeout)
	_ = os.RemoveAll(j.dir)
	return &res
}

// close stops whatever still runs (a run that failed before finish).
func (j *javaRun) close() {
	j.local.Close()
	_ = os.RemoveAll(j.dir)
}
