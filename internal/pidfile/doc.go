// Package pidfile records started processes by pid and start time, so that a
// later process can find them again and never signal a reused pid.
package pidfile
