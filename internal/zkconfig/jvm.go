package zkconfig

import "strings"

// DefaultServerHeapMB is zkEnv.sh's ZK_SERVER_HEAP: the server's -Xmx, in
// MiB, when ZK_SERVER_HEAP is unset or empty.
const DefaultServerHeapMB = "1000"

// JVMOptions returns the JVM options that the image's launch path
// (zkServer.sh start-foreground, which sources zkEnv.sh) takes from env, in
// its order: -Xmx<ZK_SERVER_HEAP>m (DefaultServerHeapMB when unset or
// empty), then SERVER_JVMFLAGS, then JVMFLAGS. The JVM takes the last of
// repeated options, so JVMFLAGS=-Xmx512m sets the heap. Each value is split
// on white space, as the scripts' unquoted expansions are; quotes are not
// interpreted.
//
// The options zkServer.sh adds itself are left out: the log and JMX
// properties (JMXDISABLE, JMXPORT and the like are not read) and the
// out-of-memory handling. So is conf/java.env, which zkEnv.sh sources.
func JVMOptions(env map[string]string) []string {
	heap := env["ZK_SERVER_HEAP"]
	if heap == "" {
		heap = DefaultServerHeapMB
	}
	opts := []string{"-Xmx" + heap + "m"}
	opts = append(opts, strings.Fields(env["SERVER_JVMFLAGS"])...)
	return append(opts, strings.Fields(env["JVMFLAGS"])...)
}
