// Package kafkasec holds the security settings of kafkachaos's Kafka
// clients, named after Kafka's own client properties (security.protocol,
// sasl.mechanism, ssl.truststore.location, ...), so that a team can reuse
// the client properties file it already has (Settings.FromProperties).
//
// Resolve checks the settings and turns them into a TLS config and SASL
// credentials; Opts turns those into franz-go client options. The CLI's
// steadystate flags and the suites' target.security config both end here.
package kafkasec
