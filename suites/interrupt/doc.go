// Package interrupt checks, end to end, that a suite run interrupted with
// SIGINT in the middle of a node drain leaves no fault behind, and that
// kafkachaos recover cleans up after one killed with SIGKILL.
package interrupt
