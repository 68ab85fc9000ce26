// Package timeline records what Kafka and Kubernetes did while a spec ran,
// as timestamped events on the same clock as the steady-state series:
// partition leaders and ISRs, broker fencing, the active controller (from
// polls of kafkaadmin.State), and pods and nodes (from the API's watch).
// Recovery milestones (ISR full, preferred leaders back, victims
// registered) are read from the same looks, not from a second wait.
package timeline
