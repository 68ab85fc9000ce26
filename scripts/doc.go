// Package scripts tests the shell scripts that the Makefile runs before the
// long set-up (prereqs.sh); the package holds no Go code of its own.
package scripts
