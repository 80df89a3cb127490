// Command bareloop is the baseline of the open-loop comparison in `make
// bench` (internal/openloop): a plain Go loop, paced by a ticker, that
// makes the same stale point read as spanbench's Read operation (same
// client version, same client config through session.Open, same options) at
// a fixed rate, each read in its own goroutine, and prints how many it made,
// found nothing and failed.
// It is a test helper: nothing in the spanbench binary links it.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bareloop:", err)
		os.Exit(1)
	}
}

func run() error {
	host := flag.String("endpoint", "", "emulator host:port")
	project := flag.String("project", "", "project")
	instance := flag.String("instance", "", "instance")
	database := flag.String("database", "", "database")
	rate := flag.Float64("rate", 1500, "reads per second")
	startAt := flag.String("start", "", "start instant (RFC 3339)")
	duration := flag.Duration("duration", 10*time.Second, "how long to read")
	rows := flag.Int64("rows", 1000, "rows in usertable")
	tag := flag.String("tag", "", "request tag")
	flag.Parse()
	start, err := time.Parse(time.RFC3339Nano, *startAt)
	if err != nil {
		return err
	}
	t := v1alpha1.TargetSpec{Project: *project, Database: *database, EmulatorHost: *host,
		Instance: v1alpha1.InstanceSpec{Name: *instance}}
	ctx := context.Background()
	s, err := session.Open(ctx, endpoint.Emulator(*host), t)
	if err != nil {
		return err
	}
	defer s.Close()
	n, notFound, failed := readAtRate(ctx, s.Client, *rate, start, *duration, *rows, *tag)
	fmt.Printf("reads %d notfound %d errors %d\n", n, notFound, failed)
	return nil
}

// readAtRate sends rate reads a second from start for d: at every tick it
// starts the reads that have come due since the last one (a ticker drops
// ticks when it is late, so counting keeps the rate), each in a goroutine.
func readAtRate(ctx context.Context, c *spanner.Client, rate float64, start time.Time, d time.Duration, rows int64, tag string) (sent, notFound, failed uint64) {
	cols := []string{"id", "field0", "field1", "field2", "field3", "field4", "field5", "field6", "field7", "field8", "field9"}
	bound := spanner.ExactStaleness(15 * time.Second)
	opts := &spanner.ReadOptions{RequestTag: tag}
	var empty, errs atomic.Uint64
	var wg sync.WaitGroup
	rng := rand.New(rand.NewPCG(1, 9))
	time.Sleep(time.Until(start))
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	total := uint64(rate * d.Seconds())
	for sent < total {
		now := <-tick.C
		due := min(uint64(now.Sub(start).Seconds()*rate)+1, total)
		for ; sent < due; sent++ {
			key := spanner.Key{workload.YCSBKey(rng.Int64N(rows))}
			wg.Go(func() {
				got := 0
				err := c.Single().WithTimestampBound(bound).ReadWithOptions(ctx, "usertable", key, cols, opts).
					Do(func(*spanner.Row) error { got++; return nil })
				switch {
				case err != nil:
					errs.Add(1)
				case got == 0:
					empty.Add(1)
				}
			})
		}
	}
	wg.Wait()
	return sent, empty.Load(), errs.Load()
}
