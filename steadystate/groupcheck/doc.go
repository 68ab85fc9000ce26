// Package groupcheck checks a consumer group's history, event by event,
// against what a group promises its application, with Jepsen's names for
// what it finds: lost, poll skip, nonmonotonic poll, committed offsets that
// go backwards or pass what was processed, and redelivery from before the
// last commit. Its memory grows with partitions, members and anomalies,
// not with records.
package groupcheck
