package cputime

import (
	"runtime"
	"testing"
)

// spin burns CPU until Process (or Thread) has advanced: it must, where
// Supported says the clock works, however busy the machine is.
func spin(clock func() float64) (before, after float64) {
	before = clock()
	x := uint64(1)
	for i := 0; i < 1<<30 && clock()-before <= 0; i++ {
		for j := 0; j < 1<<16; j++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink = x
	return before, clock()
}

var sink uint64

func TestProcessAdvances(t *testing.T) {
	if !Supported() {
		if Process() != 0 {
			t.Fatal("Process is not 0 where it is not supported")
		}
		t.Skip("no process CPU clock on " + runtime.GOOS)
	}
	before, after := spin(ProcessSeconds)
	if before <= 0 || after <= before {
		t.Fatalf("process CPU time %v then %v, want it positive and growing", before, after)
	}
}

func TestThreadAdvances(t *testing.T) {
	if runtime.GOOS != "linux" {
		if Thread() != 0 {
			t.Fatal("Thread is not 0 off Linux")
		}
		t.Skip("per-thread CPU time is read on Linux only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, after := spin(ThreadSeconds)
	if after <= before {
		t.Fatalf("thread CPU time %v then %v, want it growing", before, after)
	}
	if p := ProcessSeconds(); p < after {
		t.Errorf("process CPU time %v below one of its threads' %v", p, after)
	}
}
