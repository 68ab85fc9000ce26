// Package report owns the suite's run report (report.json): what each spec
// saw, and how a run is read back, compared and shown.
//
// Spec is one spec's entry. The suite (suites' runStory) fills it, naming
// its checks and recovery times by the constants of checks.go and
// recovery.go, so that the suite and the report agree on them. Read loads
// a run; Compare sets two runs side by side, as before and after an
// upgrade; WriteHTML renders a run as one self-contained HTML page: the
// view model of html.go in the template html.tmpl, with charts laid out by
// svg.go from the phases, series and bounds of timeline.go.
package report
