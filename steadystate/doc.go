// Package steadystate runs the Kafka workload that every chaos spec stands
// on and reports whether it held to the steady-state hypothesis.
//
// The steady-state workload is open-loop producers and a consumer that
// measure throughput and latency, and a verifier that proves every
// acknowledged record was consumed exactly once, in order, within its
// partition.
//
// A Runner turns what it measured (Measurements: per-second counts, sparse
// latency histograms, ack gaps and the verifier's verdict) into its Report
// with Merge. To scale the load out, several runners, typically in-cluster
// agents (kafkachaos steadystate --agent), share one RunID with disjoint
// producer ranges (Config.ProducerBase); each verifies its own producers'
// records, and Merge of all their Measurements gives the run's one report,
// with histograms merged rather than percentiles averaged.
//
// For live figures while a run goes on, Config.Observer is told of every
// send, ack, failure, consumed record, anomaly and phase as it happens;
// package steadystate/metrics turns them into Prometheus metrics.
package steadystate
