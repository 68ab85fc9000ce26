package nodeagent

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// AgentImage is the project's own image; on the local cluster it runs the
// kafkachaos binary.
const AgentImage = "ghcr.io/kafkachaos/kafkachaos"

// A runtime turns a container of a given image into a host command.
type runtime interface {
	// command returns the program and arguments to run.
	command(c corev1.Container) (path string, args []string, err error)
}

// runtimes maps image repositories (without tag) to local runtimes.
type runtimes struct {
	self      string            // path of the kafkachaos binary
	kafkaLibs string            // the Maven-fetched Kafka jars; "" if none
	extra     map[string]string // image repository -> host program
}

// errNoRuntime is the waiting reason of a container whose image has no
// local runtime, as ErrImagePull is on a real node.
const errNoRuntime = "ErrImagePull"

// lookup returns the runtime for image, or a message saying why there is
// none.
func (r runtimes) lookup(image string) (runtime, string) {
	repo := image
	if i := strings.LastIndex(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	switch repo {
	case AgentImage, "kafkachaos/kafkachaos":
		return selfRuntime{path: r.self}, ""
	}
	if repo == "apache/kafka" || repo == "docker.io/apache/kafka" {
		if r.kafkaLibs == "" {
			return nil, fmt.Sprintf("image %q needs the Kafka jars: run `make kafka-dist`, then `kafkachaos cluster up` from the repository", image)
		}
		return kafkaRuntime{self: r.self, libs: r.kafkaLibs}, ""
	}
	if path, ok := r.extra[repo]; ok {
		return hostRuntime{path: path}, ""
	}
	return nil, fmt.Sprintf("image %q has no local runtime on this cluster; known images: %s (runs kafkachaos), apache/kafka (runs the fetched Kafka jars)", image, AgentImage)
}

// selfRuntime runs the kafkachaos binary with the container's args. Its
// command, if any, must name kafkachaos.
type selfRuntime struct{ path string }

func (s selfRuntime) command(c corev1.Container) (string, []string, error) {
	args := append([]string(nil), c.Args...)
	if len(c.Command) > 0 {
		if !strings.HasSuffix(c.Command[0], "kafkachaos") {
			return "", nil, fmt.Errorf("the kafkachaos image runs only kafkachaos, not %q", c.Command[0])
		}
		args = append(append([]string(nil), c.Command[1:]...), args...)
	}
	return s.path, args, nil
}

// hostRuntime runs a host program for an image mapped to it with
// Config.Images: the container's command is replaced by the program, its
// args are kept.
type hostRuntime struct{ path string }

func (h hostRuntime) command(c corev1.Container) (string, []string, error) {
	args := append([]string(nil), c.Args...)
	if len(c.Command) > 1 {
		args = append(append([]string(nil), c.Command[1:]...), args...)
	}
	return h.path, args, nil
}

// kafkaRuntime runs Apache Kafka as the official apache/kafka image does:
// `kafkachaos cluster kafka-run` renders KAFKA_* env into server.properties,
// formats storage on first start, and execs the JVM. The container's
// command and args are ignored, as the image's entrypoint would not take them.
type kafkaRuntime struct{ self, libs string }

func (k kafkaRuntime) command(corev1.Container) (string, []string, error) {
	return k.self, []string{"cluster", "kafka-run", "--libs", k.libs}, nil
}
