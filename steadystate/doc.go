// Package steadystate runs the steady-state workload that every chaos spec
// stands on: open-loop producers and a consumer that measure throughput and
// latency, and a verifier that proves every acknowledged record was consumed
// exactly once, in order, within its partition.
package steadystate
