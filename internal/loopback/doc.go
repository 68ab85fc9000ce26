// Package loopback picks free TCP ports on 127.0.0.1 for the processes the
// project starts.
package loopback
