// Package report reads and writes the suite's run report (report.json),
// compares two runs, as before and after an upgrade, and renders a run as
// one self-contained HTML page (WriteHTML).
package report
