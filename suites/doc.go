// Package suites holds the Ginkgo resilience specs. Each spec reads as a
// story, which package scenario tells: steady state, baseline, inject,
// hold, recover, wait for health, then check records, bounds, identity and
// health.
package suites
