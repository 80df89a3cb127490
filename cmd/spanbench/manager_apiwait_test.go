package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// restartingAPIServer stands in for an API server that is restarting: it
// answers /version with 503 for the first down calls, then as a real one
// does. A stub, since the tests' envtest API server cannot be restarted
// under a test; the e2e fault test restarts the real one.
func restartingAPIServer(t *testing.T, down int64) (*rest.Config, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		if calls.Add(1) <= down {
			http.Error(w, "apiserver is shutting down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"33","gitVersion":"v1.33.4"}`))
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}, &calls
}

func TestManagerWaitsForTheAPIServer(t *testing.T) {
	cfg, calls := restartingAPIServer(t, 3)
	var stderr bytes.Buffer
	if err := awaitAPIServer(context.Background(), cfg, 10*time.Second, 10*time.Millisecond, &stderr); err != nil {
		t.Fatalf("awaitAPIServer gave up on an API server that answers at the 4th call: %v", err)
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("asked /version %d times, want 4 (3 refused, then the answer)", n)
	}
	if !strings.Contains(stderr.String(), "waiting up to 10s for the API server") || !strings.Contains(stderr.String(), "answers again") {
		t.Errorf("the wait is not in the log:\n%s", &stderr)
	}
}

func TestManagerGivesUpOnAnAPIServerThatStaysDown(t *testing.T) {
	cfg, _ := restartingAPIServer(t, 1<<40)
	start := time.Now()
	err := awaitAPIServer(context.Background(), cfg, 300*time.Millisecond, 20*time.Millisecond, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "did not answer within 300ms") {
		t.Fatalf("awaitAPIServer returned %v; want it to give up, saying so", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("gave up after %s, want about 300ms", d)
	}
}
