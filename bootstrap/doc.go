// Package bootstrap finds how to reach a Kafka that someone else deployed,
// from its pods alone, and checks the addresses its brokers advertise.
//
// Seeds are the broker pods' own IPs with each TCP port their containers
// declare. Discover asks the seeds, one at a time, for metadata, and returns
// what the brokers advertise on the listener that answered: the addresses a
// client is sent to after its bootstrap. A Checker then verifies, in seconds and
// without a healthy cluster, the mistakes that otherwise show only as a long
// health wait: an advertised name that does not resolve, or resolves to
// another pod; an advertised listener nobody answers on; a quorum voter
// that names no controller pod.
package bootstrap
