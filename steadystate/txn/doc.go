// Package txn runs a transactional workload beside a run's load:
// transactional producers, each transaction over several partitions, a
// share of them aborted on purpose, and two readers of their topic, one at
// read_committed and one at read_uncommitted (the control, which must see
// the aborted records the first must not); optionally a zombie producer
// that holds a transaction open past its timeout, and a copy job that
// copies another topic exactly once in a group of transactional members.
// Everything they do goes to a txncheck.Checker or CopyChecker.
package txn
