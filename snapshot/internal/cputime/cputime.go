// Package cputime reads the process's CPU time, for the snapshot
// packages' benchmarks: on a loaded machine CPU time says more than the
// wall clock.
package cputime
