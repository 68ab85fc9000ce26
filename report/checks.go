package report

// CheckName names a check of a story, as report.json records it in
// Check.Name. Every name is one of the constants below: the suite adds
// them (scenario.Run) and asserts on them (the negative spec); the
// report's tests and fixture name them so, so a renamed check is renamed
// for all.
type CheckName string

// The checks of a story, in the order scenario.Run makes them.
const (
	// CheckAudit: the deployment is safe to disrupt (PVCs,
	// PodDisruptionBudget, spread, replication settings, stable node IDs).
	CheckAudit CheckName = "deployment safe to disrupt"
	// CheckFault: a story that acts while its fault holds did so without
	// error.
	CheckFault CheckName = "fault held as planned"
	// CheckRolledOut: a story whose recovery rolls the pods (a config
	// change) saw the rollout through.
	CheckRolledOut CheckName = "recovery rolled out"
	// CheckPodsBack: the victims are Ready pods again (new pods where the
	// fault replaces them).
	CheckPodsBack CheckName = "victims back as Ready pods"
	// CheckHealth: every broker is registered, every ISR full and the
	// quorum caught up after the recovery.
	CheckHealth CheckName = "cluster healthy again"
	// CheckRecords: the verifier found no acknowledged record lost,
	// duplicated or reordered, and the load ran.
	CheckRecords CheckName = "records: none lost, duplicated or reordered"
	// CheckBounds: the steady state's hypothesis held in every phase.
	CheckBounds CheckName = "steady-state bounds in every phase"
	// CheckGroup: an application's consumer group, where the story ran
	// one, lost, skipped, went back on and committed nothing it should not
	// have (steadystate/groupcheck).
	CheckGroup CheckName = "consumer group: nothing lost, skipped or committed wrong"
	// CheckTransactions: the transactional workload, where the story ran
	// one, found no aborted read, torn transaction, lost commit,
	// duplicate, early read, committed zombie or stuck last stable offset,
	// its copy job copied every input exactly once, its readers read to
	// the end, and the run could have shown an anomaly
	// (steadystate/txncheck).
	CheckTransactions CheckName = "transactions: all or nothing, committed only, exactly once"
	// CheckJava: Kafka's own Java clients, where the story ran them
	// (scenario.JavaClientsOf), lost, skipped and read nothing at another
	// offset than acknowledged, and their group's history is clean
	// (steadystate/javaclients).
	CheckJava CheckName = "Java clients: every acknowledged record read at its offset, the group's history clean"
	// CheckLag: a consumer group's lag, where the spec bounds it, came back
	// within twice its baseline's within the bound its fault gives it
	// (groupcheck.Lag.Problems).
	CheckLag CheckName = "consumer lag back within its bound"
	// CheckPacing: a graceful operation took no Kafka pod down while a
	// partition was under-replicated (from the event timeline).
	CheckPacing CheckName = "paced: no broker taken down while under-replicated"
	// CheckIdentity: every broker kept its ID, claims and volumes; the
	// victims are new pods where the fault replaces them.
	CheckIdentity CheckName = "identity: same broker ID, new pod, same claim on the same volume"
	// CheckLogDirs: the victims' log dirs still hold the workload topic's
	// partitions.
	CheckLogDirs CheckName = "log dirs still hold their partitions"
	// CheckCluster: the cluster ID did not change.
	CheckCluster CheckName = "same cluster ID"
	// CheckMetadata: what a spec committed before its faults (topics,
	// partitions, configs, records) is still there after them.
	CheckMetadata CheckName = "metadata committed before the faults survived"
	// CheckMemory: the suite's resident memory stayed flat through a
	// soak, after its warm-up.
	CheckMemory CheckName = "suite memory flat after the warm-up"
	// CheckGoroutines: the suite's goroutines came back after each story of
	// a soak: after the first near their count before it, after the later
	// ones near the fewest seen after a story.
	CheckGoroutines CheckName = "suite goroutines back after each story"
)

// Checks returns every check name: those scenario.Run makes, in its order,
// then the soak's own.
func Checks() []CheckName {
	return []CheckName{CheckAudit, CheckFault, CheckRolledOut, CheckPodsBack, CheckHealth,
		CheckRecords, CheckBounds, CheckGroup, CheckTransactions, CheckJava, CheckLag, CheckPacing, CheckIdentity, CheckLogDirs, CheckCluster, CheckMetadata,
		CheckMemory, CheckGoroutines}
}
