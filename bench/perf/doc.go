// Command perf measures kafkachaos's steady state against Kafka's own tools
// (ProducerPerformance and EndToEndLatency) on the same local 3-broker KRaft
// cluster, with the same settings, and writes the figures as JSON.
package main
