package suites

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kafkachaos/kafkachaos/scenario"
)

// The suite tells its stories with package scenario: a story is a
// scenario.Story whose steps receive the suite's own env.
type (
	story   = scenario.Story[*env]
	picker  = scenario.Picker[*env]
	outcome = scenario.Outcome
)

// Timeouts of the specs.
const (
	storyTimeout     = scenario.StoryTimeout
	podBackTimeout   = scenario.PodBackTimeout
	podBackPoll      = scenario.PodBackPoll
	faultRecoverTime = scenario.FaultRecoverTime
	rolloutTimeout   = 10 * time.Minute
	rolloutPoll      = 2 * time.Second
)

// ginkgoCaller connects the story engine to Ginkgo: By and GinkgoWriter
// narrate, DeferCleanup (with NodeTimeout) cleans up, and a report entry
// carries each story's outcome into report.json.
type ginkgoCaller struct{}

var (
	_ scenario.Narrator = ginkgoCaller{}
	_ scenario.Cleanups = ginkgoCaller{}
	_ scenario.Recorder = ginkgoCaller{}
)

// By narrates a step with Ginkgo's By.
func (ginkgoCaller) By(text string) { By(text) }

// Write writes to GinkgoWriter.
func (ginkgoCaller) Write(p []byte) (int, error) { return GinkgoWriter.Write(p) }

// Defer is DeferCleanup, with NodeTimeout(timeout) when timeout > 0.
func (ginkgoCaller) Defer(fn func(context.Context) error, timeout time.Duration) {
	cleanup := func(ctx SpecContext) error { return fn(ctx) }
	if timeout > 0 {
		DeferCleanup(cleanup, NodeTimeout(timeout))
		return
	}
	DeferCleanup(cleanup)
}

// Spec is the running spec's full text.
func (ginkgoCaller) Spec() string { return CurrentSpecReport().FullText() }

// Record adds o to the spec's report entries, which ReportAfterSuite
// writes into report.json.
func (ginkgoCaller) Record(o outcome) { AddReportEntry(reportEntryName, o, ReportEntryVisibilityNever) }

// tell tells st against e (scenario.Run) and returns what it saw without
// failing the spec on a check (expectPassed does that), so negative specs
// can inspect it. It skips the spec in a dry run, and fails it when the
// story could not be told to its end.
func tell(ctx context.Context, e *env, st story) outcome {
	GinkgoHelper()
	o, err := scenario.Run(ctx, e.Env, e, st)
	skipOn(err)
	Expect(err).NotTo(HaveOccurred())
	return o
}

// storySpec is the suite's usual spec: Serial, within storyTimeout, it
// tells the story build returns (build may skip the spec first) against
// the suite's Kafka and fails on the first check with problems.
func storySpec(text string, labels Labels, build func(ctx SpecContext, e *env) story) bool {
	return It(text, labels, Serial, Offset(1), func(ctx SpecContext) {
		expectPassed(tell(ctx, suite, build(ctx, suite)))
	}, SpecTimeout(storyTimeout))
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

// skipOn skips the spec when err is a story's skip (a dry run, or what
// the environment cannot run), with its reason.
func skipOn(err error) {
	GinkgoHelper()
	var skip *scenario.SkipError
	if errors.As(err, &skip) {
		Skip(skip.Reason)
	}
}

// skipWithoutCluster skips a dry run that has no cluster to read (the
// local target is not brought up in a dry run).
func skipWithoutCluster(e *env, label string) {
	GinkgoHelper()
	skipOn(e.NeedCluster(label))
}
