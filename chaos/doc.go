// Package chaos holds the faults the suites inject: one small type per fault,
// each with Inject and an idempotent Recover.
package chaos
