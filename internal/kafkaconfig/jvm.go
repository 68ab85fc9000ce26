package kafkaconfig

import "strings"

// The defaults that kafka-server-start.sh and kafka-run-class.sh apply when
// the variable is unset or empty.
const (
	// DefaultHeapOpts is kafka-server-start.sh's KAFKA_HEAP_OPTS.
	DefaultHeapOpts = "-Xmx1G -Xms1G"
	// DefaultJVMPerformanceOpts is kafka-run-class.sh's KAFKA_JVM_PERFORMANCE_OPTS.
	DefaultJVMPerformanceOpts = "-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true"
	// DefaultJMXOpts is kafka-run-class.sh's KAFKA_JMX_OPTS: local JMX only.
	DefaultJMXOpts = "-Dcom.sun.management.jmxremote -Dcom.sun.management.jmxremote.authenticate=false -Dcom.sun.management.jmxremote.ssl=false"
	// DefaultJavaDebugPort is where KAFKA_DEBUG makes the JVM listen for a debugger.
	DefaultJavaDebugPort = "5005"
)

// JVMOptions returns the options that the image's launch path
// (kafka-server-start.sh, then kafka-run-class.sh) puts on the java command
// line for env, in its order: KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS,
// KAFKA_GC_LOG_OPTS, KAFKA_JMX_OPTS (with KAFKA_JMX_PORT and
// KAFKA_JMX_HOSTNAME as the image's launch script adds them; the host
// defaults to 127.0.0.1 where the image takes `hostname -i`), KAFKA_LOG4J_OPTS, then the debug agent when
// KAFKA_DEBUG is set (JAVA_DEBUG_PORT, DEBUG_SUSPEND_FLAG and JAVA_DEBUG_OPTS
// as the script reads them), then KAFKA_OPTS. Unset or empty variables take
// the scripts' defaults (the Default* constants); KAFKA_GC_LOG_OPTS and
// KAFKA_LOG4J_OPTS have none here, since the scripts' defaults name paths
// inside the image. Each value is split on white space, as the scripts'
// unquoted expansions are; quotes are not interpreted.
func JVMOptions(env map[string]string) []string {
	return JVMOptionsWithLogging(env, strings.Fields(env["KAFKA_LOG4J_OPTS"]))
}

// JVMOptionsWithLogging is JVMOptions with logging in the place of
// KAFKA_LOG4J_OPTS: options given whole, so a path in them may hold
// spaces.
func JVMOptionsWithLogging(env map[string]string, logging []string) []string {
	or := func(name, def string) string {
		if v := env[name]; v != "" {
			return v
		}
		return def
	}
	var opts []string
	add := func(s string) { opts = append(opts, strings.Fields(s)...) }

	add(or("KAFKA_HEAP_OPTS", DefaultHeapOpts))
	add(or("KAFKA_JVM_PERFORMANCE_OPTS", DefaultJVMPerformanceOpts))
	add(env["KAFKA_GC_LOG_OPTS"])
	add(or("KAFKA_JMX_OPTS", DefaultJMXOpts))
	if port := env["KAFKA_JMX_PORT"]; port != "" {
		host := or("KAFKA_JMX_HOSTNAME", "127.0.0.1")
		add("-Djava.rmi.server.hostname=" + host + " -Dcom.sun.management.jmxremote.local.only=false" +
			" -Dcom.sun.management.jmxremote.rmi.port=" + port + " -Dcom.sun.management.jmxremote.port=" + port)
	}
	opts = append(opts, logging...)
	if env["KAFKA_DEBUG"] != "" {
		suspend := or("DEBUG_SUSPEND_FLAG", "n")
		add(or("JAVA_DEBUG_OPTS", "-agentlib:jdwp=transport=dt_socket,server=y,suspend="+suspend+",address="+or("JAVA_DEBUG_PORT", DefaultJavaDebugPort)))
	}
	add(env["KAFKA_OPTS"])
	return opts
}
