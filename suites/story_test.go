// A file over 400 lines: runStory is the suite's one loop, and its
// checks' helpers sit next to it.

package suites

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafkachaos/kafkachaos/brokers"
	"github.com/kafkachaos/kafkachaos/chaos"
	"github.com/kafkachaos/kafkachaos/internal/kube"
	"github.com/kafkachaos/kafkachaos/kafkaadmin"
	"github.com/kafkachaos/kafkachaos/report"
	"github.com/kafkachaos/kafkachaos/steadystate"
	"github.com/kafkachaos/kafkachaos/timeline"
)

// Timeouts of one story.
const (
	storyTimeout       = 20 * time.Minute
	podBackTimeout     = 5 * time.Minute
	podBackPoll        = time.Second
	faultRecoverTime   = 5 * time.Minute
	runStopTimeout     = 3 * time.Minute
	rolloutTimeout     = 10 * time.Minute
	rolloutPoll        = 2 * time.Second
	minAckedOfExpected = 0.5 // a run that acked less than half its records barely ran
)

// story is one fault's tale: whom it hits, what it does, and what happens
// while it holds. Every spec is a story; runStory tells it.
type story struct {
	// label names the fault (pod-kill, node-drain, ...); the workload
	// topic is kafkachaos-<label>.
	label string
	// pick chooses the victims when the fault is injected, after the
	// baseline, so "the leader of partition 0" is the leader of then.
	pick func(ctx context.Context, e *env, topic string, snap []brokers.Broker) ([]brokers.Broker, error)
	// fault builds the fault aimed at the victims.
	fault func(e *env, victims []brokers.Broker) chaos.Fault
	// during runs while the fault holds, in place of holding for
	// timing.hold when set; an error is a failed check of the fault phase.
	during func(ctx context.Context, e *env, victims []brokers.Broker) error
	// settle runs after Recover, before the victims are awaited (a
	// config change rolls the pods back).
	settle func(ctx context.Context, e *env, victims []brokers.Broker) error
	// newPods: the victims must come back as new pods (new UIDs).
	newPods bool
	// podsBack, when set, waits for the fault's pods that are not brokers
	// (a ZooKeeper server) to come back, after the victims; the pods-back
	// check and the time to pods Ready include it.
	podsBack func(ctx context.Context, e *env) error
	// newVolume: the victims' claim from this volume claim template
	// (<template>-<pod>) comes back as a new claim on a new volume (a disk
	// loss).
	newVolume string
	// dataLost: the fault loses the victims' data on purpose (a disk
	// loss), so the data survival check leaves them out (the story's own
	// checks judge the loss); every other broker must come back with the
	// data it had.
	dataLost bool
	// finally runs after the story's own checks: it adds the figures it
	// measured (Observations) and the problems of checks of its own.
	finally func(ctx context.Context, e *env, victims []brokers.Broker, o *outcome)
	// round names one of several stories of a spec (game day rounds), so
	// each has its own row in the report.
	round string
	// expectFailures marks a negative story: its checks are meant to
	// fail, and the report says so.
	expectFailures bool
	// agents runs the steady state from this many in-cluster agent pods
	// instead of steadyState.agents.
	agents int
	// graceful marks an operation that must pace itself (a roll, a
	// drain, a graceful delete): the pacing check judges it, and its
	// unavailability is bounded tightly.
	graceful bool
	// hard marks a fault Kafka answers by fencing the victim (a kill, a
	// pause, an isolation): its unavailability is bounded by the brokers'
	// broker.session.timeout.ms (zookeeper.session.timeout.ms in
	// ZooKeeper mode).
	hard bool
	// maxUnavailable, when set, is the story's own bound on its
	// unavailability, and maxUnavailableWhy where it comes from (a fault
	// whose victim is not a broker, which the producers should hardly
	// notice).
	maxUnavailable    time.Duration
	maxUnavailableWhy string
	// unbounded, when set, says why the story's unavailability is
	// measured and reported but not bounded (a story that holds most of
	// the cluster down on purpose, to test something else).
	unbounded string
}

// outcome is what a story saw: one spec of report.json.
type outcome = report.Spec

// runStory tells st against e: steady state, baseline, inject, hold,
// recover, wait for health, after; then it checks records, bounds,
// identity and health, and returns what it saw without failing the spec
// on a check (expectPassed does that), so negative specs can inspect it.
func runStory(ctx context.Context, e *env, st story) outcome {
	GinkgoHelper()
	topic := "kafkachaos-" + st.label
	skipWithoutCluster(e, st.label)

	By("recording every broker's identity: ID, pod, node, claims and volumes")
	before, err := e.snapshot(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(brokerIDs(before)).NotTo(BeEmpty(), "no broker pods found in %s", e.namespace)
	By("checking that Kafka is healthy before the fault")
	Expect(waitHealthy(ctx, e, brokerIDs(before))).To(Succeed(), "Kafka was not healthy before the fault: the fault would be charged with an earlier one's damage")
	clusterID, err := kafkaClusterID(ctx, e)
	Expect(err).NotTo(HaveOccurred())
	o := &outcome{Spec: CurrentSpecReport().FullText(), ExpectFailures: st.expectFailures}
	if st.round != "" {
		o.Spec += " (" + st.round + ")"
	}
	// The outcome goes into the report however the story ends, so a spec
	// that fails half-way still has its row.
	DeferCleanup(func() { AddReportEntry(reportEntryName, *o, ReportEntryVisibilityNever) })
	By("auditing the deployment: PVCs, PodDisruptionBudget, spread, replication settings, stable node IDs")
	o.Add(report.CheckAudit, auditProblems(ctx, e, before)...)

	if e.cfg.DryRun {
		victims, err := st.pick(ctx, e, topic, before)
		if err != nil {
			victims = before[:1] // the topic may not exist yet: show the plan for the first broker
		}
		f := st.fault(e, victims)
		Expect(f.Inject(ctx)).To(Succeed())
		Skip("dry-run: " + f.Name())
	}
	// Not in a dry run: pods/exec is a create, which a dry run never makes.
	By("reading every broker's log dirs' directory IDs, to tell afterwards whether its data survived")
	dirsBefore := readDirIDsOrSay(ctx, e, before, o)

	cfg := e.cfg
	nAgents := cmp.Or(st.agents, cfg.SteadyState.Agents)
	unlimited := cfg.SteadyState.Rate == steadystate.RateUnlimited
	rate := fmt.Sprintf("%d records/s", cfg.SteadyState.Rate)
	if unlimited {
		rate = "as fast as each agent can"
	}
	By(fmt.Sprintf("starting the steady state on %s: %s, acks=all, idempotent, RF 3, min ISR 2", topic, rate))
	r := startLoad(ctx, e, topic, shape{agents: nAgents, unlimited: unlimited, round: st.round})
	start := time.Now()
	By("watching what Kafka and Kubernetes do: leaders, ISRs, fencing, the controller, pods and nodes")
	stopTimeline, err := watchTimeline(ctx, e, topic)
	Expect(err).NotTo(HaveOccurred())
	stopResources := sampleResources(ctx, e)
	// The cleanup stops them if the story fails before it does, and lets
	// go of them once it has: a spec of many stories (a game day, a soak)
	// must not hold every story's looks until its end.
	var watchers atomic.Pointer[func()] // atomic: the cleanup may run while an interrupted story still does
	stopWatchers := func() { stopTimeline(); stopResources() }
	watchers.Store(&stopWatchers)
	DeferCleanup(func() {
		if stop := watchers.Load(); stop != nil {
			(*stop)()
		}
	})

	By(fmt.Sprintf("warming up: at least %s, and until acks flow (topic creation, the first leader elections, the JVM's first seconds)", cfg.Timing.Warmup.Duration))
	Expect(r.WarmUp(ctx, cfg.Timing.Warmup.Duration)).To(Succeed())
	stopIfDone(ctx)
	r.Mark(steadystate.PhaseBaseline)
	By(fmt.Sprintf("holding the baseline for %s", cfg.Timing.Baseline.Duration))
	hold(ctx, cfg.Timing.Baseline.Duration)
	stopIfDone(ctx)

	victims, err := st.pick(ctx, e, topic, before)
	Expect(err).NotTo(HaveOccurred(), "choosing the victims")
	for _, v := range victims {
		o.Victims = append(o.Victims, v.ID)
	}
	h := hypothesis(ctx, e, st, before, victims, o)
	fault := st.fault(e, victims)
	o.Fault = fault.Name()
	By("injecting the fault: " + fault.Name())
	r.Mark(steadystate.PhaseFault)
	faultAt := time.Now() // before Inject: a drain's evictions happen inside it
	injectErr := fault.Inject(ctx)
	// Registered whatever Inject returned: a drain whose evictions failed
	// has still cordoned its node. Recover is idempotent.
	DeferCleanup(func(ctx SpecContext) error { return chaos.RecoverRetrying(ctx, fault, nil) }, NodeTimeout(faultRecoverTime))
	Expect(injectErr).NotTo(HaveOccurred(), "injecting the fault")
	injectedAt := time.Now()

	if st.during != nil {
		o.Add(report.CheckFault, errText(st.during(ctx, e, victims))...)
	} else {
		By(fmt.Sprintf("holding the fault for %s", cfg.Timing.Hold.Duration))
		hold(ctx, cfg.Timing.Hold.Duration)
	}

	stopIfDone(ctx)
	By("recovering: " + fault.Name())
	r.Mark(steadystate.PhaseRecovery)
	Expect(recoverThroughOutages(ctx, fault, o)).To(Succeed())
	recoveredAt := time.Now()
	if st.settle != nil {
		o.Add(report.CheckRolledOut, errText(st.settle(ctx, e, victims))...)
	}

	By(fmt.Sprintf("waiting until brokers %v are back as Ready pods", o.Victims))
	podsErr := waitPodsBack(ctx, e, victims, st.newPods)
	if podsErr == nil && st.podsBack != nil {
		podsErr = st.podsBack(ctx, e)
	}
	o.Add(report.CheckPodsBack, errText(podsErr)...)
	o.Recovery.ToPodsReady = sinceUnless(recoveredAt, podsErr)

	By("waiting until every broker is registered, every ISR is full, " + e.metadataHealth())
	healthErr := waitHealthy(ctx, e, brokerIDs(before))
	o.Add(report.CheckHealth, errText(healthErr)...)
	o.Recovery.ToHealthy = sinceUnless(recoveredAt, healthErr)
	o.Recovery.InjectToHealthy = sinceUnless(injectedAt, healthErr)
	stopIfDone(ctx)
	r.Mark(steadystate.PhaseAfter)

	By(fmt.Sprintf("running the after phase for %s", cfg.Timing.After.Duration))
	hold(ctx, cfg.Timing.After.Duration)
	loadTime := time.Since(start)
	rep, err := r.Finish(ctx, h)
	Expect(err).NotTo(HaveOccurred())
	tl := stopTimeline()
	o.Events = tl.Events
	usage := stopResources()
	o.Resources = &usage
	watchers.Store(nil)
	GinkgoWriter.Printf("what the pods used: %s\n", usage)
	if st.graceful {
		var pods []string
		for _, b := range before {
			pods = append(pods, b.Pod)
		}
		o.Add(report.CheckPacing, tl.Pacing(pods, faultAt, time.Now())...)
	}
	o.Recovery.ToBrokersRegistered = milestone(tl, recoveredAt, func(s kafkaadmin.State) bool { return s.Registered(brokerIDs(before)...) })
	o.Recovery.ToISRFull = milestone(tl, recoveredAt, kafkaadmin.State.ISRFull)
	o.Recovery.ToPreferredLeaders = milestone(tl, recoveredAt, kafkaadmin.State.PreferredLeaders)
	GinkgoWriter.Printf("what Kafka and Kubernetes did:\n%s", timeline.Summary(tl.Events))
	o.SteadyState = rep
	o.Recovery.ThroughputBack = report.ThroughputBack(rep, recoveredAt, cfg.Bounds.MinThroughputRatioAfter)
	GinkgoWriter.Printf("%s\nunavailability %s; partitions stalled over 1s: %v; recovery: %v\n",
		rep.SummaryLine, rep.Unavailable.Round(time.Millisecond), rep.Stalled(time.Second), o.Recovery)

	expected := float64(cfg.SteadyState.Rate) * loadTime.Seconds()
	o.Add(report.CheckRecords, recordProblems(rep, expected)...)
	var bounds []string
	for _, v := range rep.Violations {
		bounds = append(bounds, fmt.Sprint(v))
	}
	o.Add(report.CheckBounds, bounds...)

	after, err := e.snapshot(ctx)
	Expect(err).NotTo(HaveOccurred())
	o.Add(report.CheckIdentity, append(identityProblems(before, after, o.Victims, st.newPods, st.newVolume),
		dataSurvivalProblems(ctx, e, dirsBefore, after, lostOnPurpose(st, o.Victims))...)...)
	var brokerVictims []int32 // controllers have no log dirs for the topic
	for _, v := range victims {
		if v.BrokerRole {
			brokerVictims = append(brokerVictims, v.ID)
		}
	}
	o.Add(report.CheckLogDirs, logDirProblems(ctx, e, brokerVictims, topic)...)
	switch now, err := kafkaClusterID(ctx, e); {
	case err != nil:
		o.Add(report.CheckCluster, fmt.Sprintf("cluster ID: want %q, could not read it: %v", clusterID, err))
	case now != clusterID:
		o.Add(report.CheckCluster, fmt.Sprintf("cluster ID: want %q, got %q", clusterID, now))
	default:
		o.Add(report.CheckCluster)
	}
	if st.finally != nil {
		st.finally(ctx, e, victims, o)
	}
	for _, ob := range o.Observations {
		By("observed: " + ob)
	}
	return *o
}

// hypothesis is what the story's load is judged by, once the victims are
// known: the unavailability bound (on the times no partition got an ack,
// and on each partition's own longest stall), the p99 ack bound, the
// throughput after, and for a graceful operation the p99 ack against the
// baseline's. Each limit is written into o.Limits with its reason.
func hypothesis(ctx context.Context, e *env, st story, snap, victims []brokers.Broker, o *outcome) steadystate.Hypothesis {
	GinkgoHelper()
	cfg := e.cfg
	maxUnavailable, why := unavailabilityBound(ctx, e, st, snap, victims)
	o.Limits = append(o.Limits, fmt.Sprintf("maxUnavailable %s: %s", maxUnavailable, why))
	By(fmt.Sprintf("bounding the unavailability, and each partition's longest stall, at %s: %s", maxUnavailable, why))
	h := steadystate.Hypothesis{
		All:               steadystate.Bounds{MaxUnavailable: maxUnavailable, MaxP99Ack: cfg.Bounds.MaxP99Ack.Duration},
		Phases:            map[steadystate.Phase]steadystate.Bounds{steadystate.PhaseAfter: {MinThroughputRatio: cfg.Bounds.MinThroughputRatioAfter}},
		MaxPartitionStall: maxUnavailable,
	}
	if ratio, floor := cfg.Bounds.GracefulP99AckRatio, cfg.Bounds.GracefulP99AckFloor.Duration; st.graceful && ratio > 0 {
		// A graceful operation must not slow the clients down much either.
		b := steadystate.Bounds{MaxP99AckRatio: ratio, P99AckFloor: floor}
		h.Phases[steadystate.PhaseFault], h.Phases[steadystate.PhaseRecovery] = b, b
		o.Limits = append(o.Limits, fmt.Sprintf("p99 ack in the fault and recovery phases at most %g× the baseline's, at least %s: a graceful operation (bounds.gracefulP99AckRatio, bounds.gracefulP99AckFloor)", ratio, floor))
	}
	return h
}

// recoverThroughOutages recovers fault, retrying while the Kubernetes API
// cannot be reached or cannot serve (chaos.RecoverRetrying), up to
// faultRecoverTime. A wait for the API is an observation of the outcome,
// named as the API's outage and not charged to Kafka.
func recoverThroughOutages(ctx context.Context, fault chaos.Fault, o *outcome) error {
	ctx, cancel := context.WithTimeout(ctx, faultRecoverTime)
	defer cancel()
	start := time.Now()
	var failed int
	var last error
	err := chaos.RecoverRetrying(ctx, fault, func(err error, next time.Duration) {
		failed, last = failed+1, err
		GinkgoWriter.Printf("recovering: the Kubernetes API did not serve the recovery (%v); trying again in %s\n", err, next.Round(time.Millisecond))
	})
	if failed > 0 {
		o.Observations = append(o.Observations, fmt.Sprintf("the Kubernetes API could not serve the recovery for %s (%d attempts failed, the last with: %v); recovered: %t",
			time.Since(start).Round(100*time.Millisecond), failed, last, err == nil))
	}
	return err
}

// skipWithoutCluster skips a dry run that has no cluster to read (the
// local target is not brought up in a dry run).
func skipWithoutCluster(e *env, label string) {
	if e.cs == nil {
		By(fmt.Sprintf("dry-run: would run the %s story against the local cluster", label))
		Skip("dry-run")
	}
}

// expectPassed fails the spec on the first check with problems, narrating
// each check.
func expectPassed(o outcome) {
	GinkgoHelper()
	for _, c := range o.Checks {
		By("checking: " + string(c.Name))
		Expect(c.Problems).To(BeEmpty(), string(c.Name))
	}
}

// recordProblems reads the verifier's verdict.
func recordProblems(rep *steadystate.Report, expected float64) []string {
	var p []string
	if n := rep.Records.Lost; n > 0 {
		p = append(p, fmt.Sprintf("%d acknowledged records lost, e.g. %+v", n, rep.Records.LostExamples))
	}
	if n := rep.Records.Duplicates; n > 0 {
		p = append(p, fmt.Sprintf("%d duplicates, e.g. %+v", n, rep.Records.DuplicateExamples))
	}
	if n := rep.Records.Reordered; n > 0 {
		p = append(p, fmt.Sprintf("%d reordered, e.g. %+v", n, rep.Records.ReorderExamples))
	}
	if float64(rep.Records.Acked) < minAckedOfExpected*expected {
		p = append(p, fmt.Sprintf("only %d records acknowledged of about %.0f sent on schedule: the load barely ran", rep.Records.Acked, expected))
	}
	if rep.Records.DrainIncomplete {
		p = append(p, "the consumer did not read up to every acknowledged offset before the drain timeout")
	}
	return p
}

// identityProblems compares each broker before and after: victims must be
// new pods when newPods, and on a new claim from template newVolume when
// set; the others keep their claims and volumes.
func identityProblems(before, after []brokers.Broker, victims []int32, newPods bool, newVolume string) []string {
	var p []string
	for _, b := range before {
		a, ok := brokers.ByID(after, b.ID)
		if !ok {
			p = append(p, fmt.Sprintf("broker %d: no pod carries this broker ID any more (was %s)", b.ID, b.Pod))
			continue
		}
		var w brokers.Rejoin // a bystander keeps everything
		if slices.Contains(victims, b.ID) {
			w.NewPod = newPods
			if newVolume != "" {
				w.NewClaim = newVolume + "-" + b.Pod
			}
		}
		for _, pr := range brokers.CompareIdentity(b, a, w) {
			p = append(p, pr.String())
		}
	}
	return p
}

// logDirProblems checks with DescribeLogDirs that each victim's log dirs
// still hold the workload topic's partitions it replicates.
func logDirProblems(ctx context.Context, e *env, ids []int32, topic string) []string {
	var p []string
	err := e.withKafka(func(cl *kafkaadmin.Client) error {
		for _, id := range ids {
			probs, err := cl.CheckLogDirs(ctx, id, topic)
			if err != nil {
				p = append(p, fmt.Sprintf("broker %d: %v", id, err))
			}
			for _, pr := range probs {
				p = append(p, pr.String())
			}
		}
		return nil
	})
	if err != nil {
		return []string{err.Error()}
	}
	return p
}

// auditProblems runs brokers.Audit on the snapshot.
func auditProblems(ctx context.Context, e *env, snap []brokers.Broker) []string {
	var fs []brokers.Finding
	err := e.withKafka(func(cl *kafkaadmin.Client) (err error) {
		fs, err = brokers.Audit(ctx, e.cs, cl, e.namespace, snap)
		return err
	})
	if err != nil {
		return []string{err.Error()}
	}
	var p []string
	for _, f := range fs {
		p = append(p, f.String())
	}
	return p
}

func kafkaClusterID(ctx context.Context, e *env) (string, error) {
	var id string
	err := e.withKafka(func(cl *kafkaadmin.Client) (err error) {
		id, err = cl.ClusterID(ctx)
		return err
	})
	return id, err
}

// waitPodsBack waits until each victim's pod is Ready (and, with newPod,
// a new pod); it returns what it last saw when that never happened.
func waitPodsBack(ctx context.Context, e *env, victims []brokers.Broker, newPod bool) error {
	return InterceptGomegaFailure(func() {
		Eventually(ctx, func(ctx context.Context) error {
			var waiting []string
			for _, v := range victims {
				p, err := e.cs.CoreV1().Pods(e.namespace).Get(ctx, v.Pod, metav1.GetOptions{})
				switch {
				case err != nil:
					waiting = append(waiting, fmt.Sprintf("%s: %v", v.Pod, err))
				case newPod && p.UID == v.PodUID:
					waiting = append(waiting, fmt.Sprintf("%s: still the old pod %s", v.Pod, p.UID))
				case !kube.PodReady(p):
					waiting = append(waiting, fmt.Sprintf("%s: %s on %q, not Ready", v.Pod, p.Status.Phase, p.Spec.NodeName))
				}
			}
			if len(waiting) > 0 {
				return fmt.Errorf("%s", strings.Join(waiting, "; "))
			}
			return nil
		}).WithTimeout(podBackTimeout).WithPolling(podBackPoll).Should(Succeed(), "victims back as Ready pods")
	})
}

// stopIfDone ends the spec when it was interrupted (Ctrl-C, SIGTERM) or
// timed out, instead of going on with a dead context; the cleanups then
// recover the fault with a fresh one.
func stopIfDone(ctx context.Context) {
	GinkgoHelper()
	if ctx.Err() != nil {
		Fail(fmt.Sprintf("stopped: %v; the cleanups recover the fault", context.Cause(ctx)))
	}
}

// hold keeps a fault (or a phase) in place for d; it returns early when ctx
// ends.
func hold(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// sinceUnless is the time since t, or never when the wait for it failed.
func sinceUnless(t time.Time, err error) report.Duration {
	if err != nil {
		return report.Never()
	}
	return report.Reached(time.Since(t))
}

func errText(err error) []string {
	if err == nil {
		return nil
	}
	return []string{err.Error()}
}

// unavailabilityBound is the longest time without an ack the story
// allows (0: none), and where that limit comes from: none for a story
// that says why it is unbounded; the config's bounds.maxUnavailable when
// set; else by the kind of fault.
func unavailabilityBound(ctx context.Context, e *env, st story, snap, victims []brokers.Broker) (time.Duration, string) {
	switch {
	case st.unbounded != "":
		return 0, "not bounded: " + st.unbounded
	case e.cfg.Bounds.MaxUnavailable.Duration > 0:
		return e.cfg.Bounds.MaxUnavailable.Duration, "bounds.maxUnavailable in the config"
	case st.maxUnavailable > 0:
		return st.maxUnavailable, st.maxUnavailableWhy
	case st.graceful:
		return GracefulMaxUnavailable, "a graceful operation"
	case !st.hard:
		return DefaultMaxUnavailable, "the default for a fault of no known timing"
	}
	// The active controller's value is the one in force; a broker's is read
	// (controllers are not always reachable by the suite's clients), which
	// the manifests keep equal.
	// In ZooKeeper mode the controller learns of a dead broker when its
	// ZooKeeper session expires.
	key, session := "broker.session.timeout.ms", kafkaDefaultSessionTimeout
	if e.zkConnect != "" {
		key, session = "zookeeper.session.timeout.ms", kafkaDefaultZooKeeperSessionTimeout
	}
	from := "Kafka's default " + key + " (the brokers' could not be read)"
	if ids := brokerIDs(snap); len(ids) > 0 {
		if d, ok := brokerConfigDuration(ctx, e, ids[0], key); ok {
			session, from = d, fmt.Sprintf("%s %d of broker %d", key, d.Milliseconds(), ids[0])
		}
	}
	if e.zkConnect != "" {
		// ZooKeeper expires sessions in tickTime buckets, so an expiry
		// comes up to a tick late (measured here: 16.2-20.9 s for an
		// 18 s session).
		return session + HardMargin + zooKeeperTick, fmt.Sprintf("a hard fault in ZooKeeper mode: %s + %s + ZooKeeper's tickTime %s (sessions expire by the tick)", from, HardMargin, zooKeeperTick)
	}
	if failover, why := controllerFailover(ctx, e, victims); failover > 0 {
		return session + HardMargin + failover, fmt.Sprintf("a hard fault: %s + %s + %s", from, HardMargin, why)
	}
	return session + HardMargin, fmt.Sprintf("a hard fault: %s + %s", from, HardMargin)
}

// brokerConfigDuration reads a broker's config key, a count of
// milliseconds; false when it cannot be read or is not positive.
func brokerConfigDuration(ctx context.Context, e *env, id int32, key string) (d time.Duration, ok bool) {
	_ = e.withKafka(func(cl *kafkaadmin.Client) error {
		v, err := cl.BrokerConfig(ctx, id, key)
		if ms, perr := strconv.Atoi(v); err == nil && perr == nil && ms > 0 {
			d, ok = time.Duration(ms)*time.Millisecond, true
		}
		return nil
	})
	return d, ok
}

// zooKeeperTick is the official zookeeper image's tickTime (ZOO_TICK_TIME),
// which the zookeeper layout keeps.
const zooKeeperTick = 2 * time.Second

// The defaults of broker.session.timeout.ms (KRaft) and
// zookeeper.session.timeout.ms (ZooKeeper mode).
const (
	kafkaDefaultSessionTimeout          = 9 * time.Second
	kafkaDefaultZooKeeperSessionTimeout = 18 * time.Second
)
