// Package suites holds the Ginkgo resilience specs. Each spec reads as a
// story: steady state, baseline, inject, hold, recover, wait for health, then
// check bounds, records, identity and health.
package suites
