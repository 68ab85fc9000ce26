// Command kafkachaos is the CLI of the kafkachaos resilience suite.
package main
