package report

// Names of the checks a story makes, as report.json records them in
// Check.Name. The suite adds them (suites' runStory) and asserts on them
// (the negative spec); the report's tests and fixture name them so, so a
// renamed check is renamed for both.
const (
	// CheckAudit: the deployment is safe to disrupt (PVCs,
	// PodDisruptionBudget, spread, replication settings, stable node IDs).
	CheckAudit = "deployment safe to disrupt"
	// CheckFault: a story that acts while its fault holds did so without
	// error.
	CheckFault = "fault held as planned"
	// CheckRolledOut: a story whose recovery rolls the pods (a config
	// change) saw the rollout through.
	CheckRolledOut = "recovery rolled out"
	// CheckPodsBack: the victims are Ready pods again (new pods where the
	// fault replaces them).
	CheckPodsBack = "victims back as Ready pods"
	// CheckHealth: every broker is registered, every ISR full and the
	// quorum caught up after the recovery.
	CheckHealth = "cluster healthy again"
	// CheckRecords: the verifier found no acknowledged record lost,
	// duplicated or reordered, and the load ran.
	CheckRecords = "records: none lost, duplicated or reordered"
	// CheckBounds: the steady state's hypothesis held in every phase.
	CheckBounds = "steady-state bounds in every phase"
	// CheckIdentity: every broker kept its ID, claims and volumes; the
	// victims are new pods where the fault replaces them.
	CheckIdentity = "identity: same broker ID, new pod, same claim on the same volume"
	// CheckLogDirs: the victims' log dirs still hold the workload topic's
	// partitions.
	CheckLogDirs = "log dirs still hold their partitions"
	// CheckCluster: the cluster ID did not change.
	CheckCluster = "same cluster ID"
)
