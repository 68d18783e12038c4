// Package cputime measures the CPU time a benchmark used, for the speed
// figures that must not depend on how busy the machine is (the project's
// test machines run several builds at once): cycles per byte from CPU
// time, not wall time. One copy for every package's benchmarks and the
// speed commands; it used to be copied into thirty test files.
package cputime

import "time"

// Process is the CPU time (user and system, all threads) this process has
// used so far, or 0 where the system does not tell it (see Supported).
func Process() time.Duration { return process() }

// ProcessSeconds is Process in seconds.
func ProcessSeconds() float64 { return Process().Seconds() }

// Thread is the CPU time the calling OS thread has used so far (Linux:
// RUSAGE_THREAD), or 0 elsewhere. Lock the goroutine to its thread
// (runtime.LockOSThread) around what is measured.
func Thread() time.Duration { return thread() }

// ThreadSeconds is Thread in seconds.
func ThreadSeconds() float64 { return Thread().Seconds() }

// Supported reports whether Process measures anything on this system.
func Supported() bool { return supported }
