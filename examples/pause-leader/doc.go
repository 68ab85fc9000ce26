// Package pauseleader is a scenario of one's own, written outside the
// kafkachaos repository against its engine (package scenario): the leader
// of partition 0 of the scenario's topic is frozen for a while, at the
// rate and within the bounds this team chose, and every check of the suite
// judges it. It is a plain Go test: no Ginkgo, no fork of the suite.
package pauseleader
