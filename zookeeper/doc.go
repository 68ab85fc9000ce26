// Package zookeeper is the health of a ZooKeeper ensemble, from its
// four-letter words.
//
// Ask sends one four-letter word (srvr, mntr, ruok, ...) to a server's
// client port and returns its answer. ParseSrvr and ParseMntr turn the
// answers of srvr and mntr into typed values; their formats are those of
// ZooKeeper 3.8 (StatCommand and ServerStats.toString for srvr,
// MonitorCommand for mntr). Check asks every server of an ensemble at once
// and returns what it saw, an Ensemble, whose Problems name what keeps it
// from being healthy: servers that do not answer or do not serve, no leader
// or more than one, a leader with too few synced followers, a standalone
// server inside an ensemble.
//
// The words used must be in the servers' 4lw.commands.whitelist; srvr
// always is (zkServer.sh needs it), mntr and ruok must be listed. This
// package speaks plain TCP to addresses the caller can reach; which pod is
// which server is the caller's business.
package zookeeper
