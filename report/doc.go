// Package report owns the suite's run report (report.json): what each spec
// saw, and how a run is read back, compared and shown.
//
// Run is a report: its schema version, the Environment of the run, and a
// Spec per spec. The suite (scenario.Run) fills each Spec, naming its
// checks by the CheckName constants of checks.go and its recovery times by
// Recovery's fields, so that the suite and the report agree on them; the
// steady state's verdicts carry their bounds as numbers (steadystate's
// Figures). Write writes a report of SchemaVersion; Read reads it and the
// bare list of specs of schema 1. Compare sets two runs side by side, as
// before and after an upgrade; WriteHTML renders a run as one
// self-contained HTML page: the view model of html.go in the template
// html.tmpl, with charts laid out by svg.go from the phases, series and
// bounds of timeline.go.
package report
