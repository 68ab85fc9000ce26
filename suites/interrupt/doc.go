// Package interrupt runs the suite as a process against one kept local
// cluster, end to end: interrupted with SIGINT while a fault holds, it must
// leave no fault behind; killed with SIGKILL, kafkachaos recover must clean
// up after it, at fixed points and at random ones; and the API server's
// audit log must show that a dry run, and a run against a namespace that
// does not opt in, change nothing.
package interrupt
