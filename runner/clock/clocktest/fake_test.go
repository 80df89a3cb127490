package clocktest

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)

func fired(c <-chan time.Time) (time.Time, bool) {
	select {
	case t := <-c:
		return t, true
	default:
		return time.Time{}, false
	}
}

func TestFakeTimerFiresOnlyWhenSteppedToItsTime(t *testing.T) {
	f := NewFake(t0)
	tm := f.NewTimer(time.Second)
	f.Step(999 * time.Millisecond)
	if _, ok := fired(tm.C()); ok {
		t.Fatal("the timer fired before its time")
	}
	f.Step(time.Millisecond)
	if at, ok := fired(tm.C()); !ok || !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("the timer fired %v (%v); want once at %v", at, ok, t0.Add(time.Second))
	}
	if f.HasWaiters() {
		t.Error("a fired timer is still waiting")
	}
	f.Step(time.Second) // nothing pending: nothing fires
	tm.Reset(time.Second)
	f.Step(time.Second) // fires; nobody takes the value
	if tm.Reset(time.Second) {
		t.Error("Reset of a fired timer reported it active")
	}
	if _, ok := fired(tm.C()); ok {
		t.Error("Reset kept a value that fired before it")
	}
	f.Step(500 * time.Millisecond)
	if !tm.Reset(time.Minute) || f.Waiters() != 1 {
		t.Errorf("Reset of a pending timer: want it reported active and one waiter, have %d", f.Waiters())
	}
	if !tm.Stop() || f.HasWaiters() {
		t.Error("Stop of a pending timer: want it reported active and no waiter left")
	}
}

func TestFakeTickerRepeatsAndDropsTicksNobodyTook(t *testing.T) {
	f := NewFake(t0)
	tk := f.NewTicker(time.Second)
	f.Step(3 * time.Second) // three periods pass, one tick is kept
	if _, ok := fired(tk.C()); !ok {
		t.Fatal("no tick after three periods")
	}
	if _, ok := fired(tk.C()); ok {
		t.Fatal("a ticker kept more than one tick")
	}
	f.Step(500 * time.Millisecond)
	if _, ok := fired(tk.C()); ok {
		t.Fatal("the ticker ticked between periods")
	}
	f.Step(500 * time.Millisecond)
	if at, ok := fired(tk.C()); !ok || !at.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("the next tick came %v (%v); want at %v", at, ok, t0.Add(4*time.Second))
	}
	tk.Stop()
	f.Step(time.Second)
	if _, ok := fired(tk.C()); ok || f.HasWaiters() {
		t.Error("a stopped ticker ticked or still waits")
	}
}
