package kafkaconfig

import (
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/kafkachaos/kafkachaos/internal/properties"
)

// EnvPrefix starts the name of every environment variable that can become a
// property.
const EnvPrefix = "KAFKA_"

// DefaultClusterID is the cluster ID that the image uses when CLUSTER_ID is
// unset or empty.
const DefaultClusterID = "5L6g3nShT-eMCtK--X86sw"

// ErrNoConfig is returned by Render for an environment with no KAFKA_*
// config variable. The image would fall back to its bundled single-node
// server.properties; Render refuses instead, since a node without config is
// almost always a manifest mistake.
var ErrNoConfig = errors.New("kafkaconfig: no KAFKA_* config variable in the environment")

// notConfig lists the KAFKA_* variables that the image's scripts read
// themselves and never turn into properties (the image's
// ExcludeServerPropsEnv, plus what kafka-run-class.sh and the launch script
// read: KAFKA_DEBUG and KAFKA_JMX_PORT).
var notConfig = map[string]bool{
	"KAFKA_VERSION":              true,
	"KAFKA_HEAP_OPTS":            true,
	"KAFKA_LOG4J_OPTS":           true,
	"KAFKA_OPTS":                 true,
	"KAFKA_JMX_OPTS":             true,
	"KAFKA_JVM_PERFORMANCE_OPTS": true,
	"KAFKA_GC_LOG_OPTS":          true,
	"KAFKA_LOG4J_ROOT_LOGLEVEL":  true,
	"KAFKA_LOG4J_LOGGERS":        true,
	"KAFKA_TOOLS_LOG4J_LOGLEVEL": true,
	"KAFKA_JMX_HOSTNAME":         true,
	"KAFKA_JMX_PORT":             true,
	"KAFKA_DEBUG":                true,
}

// PropertyName returns the property that the environment variable name
// becomes, and false if it becomes none (no KAFKA_ prefix, or one of the
// variables the image's scripts read themselves, such as KAFKA_HEAP_OPTS).
//
// As in the image, the prefix is dropped, the rest is lower-cased, then every
// '_' becomes '.', then "..." becomes '-' and ".." becomes '_'. So '___'
// stands for '-', '__' for '_', and '_' for '.':
// KAFKA_LISTENER_SECURITY_PROTOCOL_MAP is listener.security.protocol.map and
// KAFKA_LISTENER_NAME_CONTROLLER_SASL__MECHANISM___X is
// listener.name.controller.sasl_mechanism-x.
func PropertyName(env string) (string, bool) {
	if !strings.HasPrefix(env, EnvPrefix) || notConfig[env] {
		return "", false
	}
	name := strings.ToLower(strings.TrimPrefix(env, EnvPrefix))
	name = strings.ReplaceAll(name, "_", ".")
	name = strings.ReplaceAll(name, "...", "-")
	name = strings.ReplaceAll(name, "..", "_")
	return name, true
}

// EnvName returns the environment variable that PropertyName maps to
// property: '.' becomes '_', '_' becomes '__', '-' becomes '___', upper-cased,
// with the KAFKA_ prefix. It fails for a property that no variable maps to:
// one with upper-case letters, or with a run of '.', '_' and '-' that the
// mapping cannot tell apart (such as "a_.b"), or one whose variable the image
// reserves (heap.opts).
func EnvName(property string) (string, error) {
	if property == "" {
		return "", errors.New("kafkaconfig: empty property name")
	}
	var b strings.Builder
	b.WriteString(EnvPrefix)
	for _, r := range property {
		switch r {
		case '.':
			b.WriteByte('_')
		case '_':
			b.WriteString("__")
		case '-':
			b.WriteString("___")
		default:
			b.WriteString(strings.ToUpper(string(r)))
		}
	}
	env := b.String()
	if back, ok := PropertyName(env); !ok || back != property {
		return "", fmt.Errorf("kafkaconfig: no environment variable maps to property %q (%s maps to %q)", property, env, back)
	}
	return env, nil
}

// hostInURL matches what the image's configure script rewrites to derive
// listeners from advertised listeners: sed 's|://[^:]*:|://0.0.0.0:|g'.
var hostInURL = regexp.MustCompile(`://[^:]*:`)

// Render returns the server.properties that the image writes for env, the
// container's environment.
//
// Every KAFKA_* variable that PropertyName maps becomes a property, with its
// value unchanged. As the image's configure script does:
//   - a node whose KAFKA_PROCESS_ROLES is exactly "controller" must not set
//     KAFKA_ADVERTISED_LISTENERS (the image exits with an error);
//   - when KAFKA_LISTENERS is unset or empty, the node is not controller-only, and
//     KAFKA_ADVERTISED_LISTENERS is set, listeners are the advertised
//     listeners with every host replaced by 0.0.0.0.
//
// Render fails with ErrNoConfig when no variable maps to a property, and when
// two variables map to the same property with different values (such as
// KAFKA_LOG_DIRS and KAFKA_log_dirs), where the image's result would depend on
// map order. In Kubernetes, beware of service links: a Service named "kafka"
// injects KAFKA_PORT, KAFKA_SERVICE_HOST and so on, which become properties
// (port, service.host) that Kafka ignores with a warning.
func Render(env map[string]string) (properties.Properties, error) {
	roles := env["KAFKA_PROCESS_ROLES"]
	advertised, hasAdvertised := env["KAFKA_ADVERTISED_LISTENERS"]
	if roles == "controller" && hasAdvertised {
		if advertised != "" {
			return properties.Properties{}, errors.New("kafkaconfig: KAFKA_ADVERTISED_LISTENERS is not supported on a KRaft controller (KAFKA_PROCESS_ROLES=controller)")
		}
		hasAdvertised = false // the image unsets an empty one
	}

	names := make([]string, 0, len(env))
	for name := range env {
		names = append(names, name)
	}
	sort.Strings(names) // deterministic error messages

	props := make(map[string]string)
	from := make(map[string]string) // property -> variable, for conflicts
	for _, name := range names {
		if name == "KAFKA_ADVERTISED_LISTENERS" && !hasAdvertised {
			continue
		}
		key, ok := PropertyName(name)
		if !ok {
			continue
		}
		if key == "" {
			return properties.Properties{}, fmt.Errorf("kafkaconfig: %s maps to an empty property name", name)
		}
		value := env[name]
		if prev, dup := from[key]; dup && props[key] != value {
			return properties.Properties{}, fmt.Errorf("kafkaconfig: %s and %s both set %s, to different values", prev, name, key)
		}
		props[key] = value
		from[key] = name
	}
	if len(props) == 0 {
		return properties.Properties{}, ErrNoConfig
	}

	if env["KAFKA_LISTENERS"] == "" && roles != "controller" && hasAdvertised && advertised != "" {
		props["listeners"] = hostInURL.ReplaceAllString(advertised, "://0.0.0.0:")
	}
	return properties.NewProperties(props), nil
}

// ClusterID returns the cluster ID that the image formats storage with:
// CLUSTER_ID, or DefaultClusterID when that is unset or empty. It fails for
// an ID that Kafka's storage tool would reject: a cluster ID is 16 bytes in
// URL-safe base64 without padding (22 characters).
func ClusterID(env map[string]string) (string, error) {
	id := env["CLUSTER_ID"]
	if id == "" {
		return DefaultClusterID, nil
	}
	if err := ValidateClusterID(id); err != nil {
		return "", err
	}
	return id, nil
}

// ValidateClusterID reports whether id is a cluster ID that Kafka accepts:
// 16 bytes in URL-safe base64 without padding.
func ValidateClusterID(id string) error {
	b, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil || len(b) != 16 {
		return fmt.Errorf("kafkaconfig: cluster ID %q is not 16 bytes of URL-safe base64 without padding (22 characters, as kafka-storage random-uuid prints)", id)
	}
	return nil
}
