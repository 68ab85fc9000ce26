// Package properties reads and writes Java .properties files, as
// java.util.Properties does, for the server.properties that the local
// brokers run with and the client properties files that users pass to the
// suite (--command-config).
package properties
