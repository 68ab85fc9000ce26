// Package txncheck checks the history of transactional producers and of
// the readers of their records against what Kafka's transactions promise,
// with Jepsen's names for what it finds: an aborted read (G1a), a torn
// transaction, a lost commit, a duplicate, a read before the commit was
// sent, a zombie's transaction committed after its timeout, and a last
// stable offset that stuck; and a copy job's output (consume-transform-
// produce) against its input: an input copied twice or not at all. A run
// that could not have shown an aborted read or a lost commit, or whose
// readers did not read to the end, is not clean. Its memory grows with
// the transactions of a run.
package txncheck
