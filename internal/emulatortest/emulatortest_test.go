package emulatortest_test

import (
	"net"
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/spanner/emulator"
)

func TestStart(t *testing.T) {
	var e *emulator.Emulator
	t.Run("sub", func(t *testing.T) {
		e = emulatortest.Start(t)
		if c, err := net.DialTimeout("tcp", e.Host(), time.Second); err != nil {
			t.Fatal(err)
		} else {
			_ = c.Close()
		}
	})
	// The subtest's cleanup has stopped it: its port no longer answers.
	if c, err := net.DialTimeout("tcp", e.Host(), time.Second); err == nil {
		_ = c.Close()
		t.Errorf("emulator at %s still answers after the test that started it ended", e.Host())
	}
}
