// Package txncheck checks the history of transactional producers and of
// the readers of their records against what Kafka's transactions promise,
// with Jepsen's names for what it finds: an aborted read (G1a), a torn
// transaction, a lost commit, a duplicate, a read before the commit was
// sent, and a last stable offset that stuck. Its memory grows with the
// transactions of a run.
package txncheck
