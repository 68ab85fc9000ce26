// Package report reads and writes the suite's run report (report.json) and
// compares two runs, as before and after an upgrade.
package report
