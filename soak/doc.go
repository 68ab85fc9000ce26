// Package soak watches the suite's own process through a long run (a game
// day of repeated faults): its resident memory and its goroutines, sampled
// at a fixed interval, and judged for leaks. Memory is judged after a
// warm-up (the first stories fill caches and connection pools), by the
// median of the run's last window against the median of the window after
// the warm-up, so the garbage collector's sawtooth is not taken for a
// leak. Goroutines are judged after each story: the first must come back
// near the count before it, each later one near the fewest seen after a
// story since.
package soak
