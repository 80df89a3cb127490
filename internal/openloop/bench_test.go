package openloop_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/internal/procrss"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/emulator"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

var (
	pairs    = flag.Int("openloop.pairs", 3, "interleaved pairs (engine, bare loop) per rate, one fresh emulator each")
	loadFor  = flag.Duration("openloop.duration", 10*time.Second, "how long each side sends")
	ratesArg = flag.String("openloop.rates", "1500,5000", "reads per second to compare at, comma-separated")
	prebuilt = flag.String("openloop.spanbench", "", "a spanbench binary to measure instead of building this tree's (e.g. an older commit's)")
)

const (
	rows    = 1000
	runName = "openloop"
	opName  = "read"
	// lead is how long before its start a side is launched: time to connect
	// and find the dataset loaded, so that neither starts late and bursts.
	lead = 4 * time.Second
)

// side is one process's measurement.
type side struct {
	reads, notFound uint64
	errors          uint64        // failed reads (counted in reads: their CPU was spent)
	missed          uint64        // engine only: sends the in-flight cap refused
	p99             time.Duration // engine only: latency p99 from the intended times
	cpu             time.Duration // user+system from the start instant to exit
	user, system    time.Duration
	readyRSS        int64   // bytes at the start instant: initialised, connected, idle
	maxRSS          int64   // bytes, the process's own peak (procrss)
	maxAnon         int64   // bytes, the peak of its anonymous part: heap and stacks
	switches        float64 // context switches of all its threads per read, over most of the run
}

func (s side) perRead() time.Duration { return s.cpu / time.Duration(max(s.reads, 1)) }

// cpuColumn is "total (user+system)" in µs per read.
func (s side) cpuColumn() string {
	n := time.Duration(max(s.reads, 1))
	return fmt.Sprintf("%.0f (%.0f+%.0f) %.1f cs", micros(s.cpu/n), micros(s.user/n), micros(s.system/n), s.switches)
}

// BenchmarkOpenLoopVsBareLoop runs `spanbench run` (the runner build, as
// runner pods run it: /spanbench-runner, cmd/spanbench with the tag runner)
// and the bare loop at the same open-loop rate of
// stale point reads, one after the other against one fresh emulator per
// pair (alternating which goes first), and reports the engine's client CPU
// per read and peak RSS against the bare loop's: medians and ranges over the
// pairs, with the host's load average. CPU is counted from each side's
// start instant (its setup excluded) to its exit; the emulator runs in its
// own processes and is not counted. With -openloop.spanbench naming several
// binaries (say, before and after a change), each pair runs them all.
func BenchmarkOpenLoopVsBareLoop(b *testing.B) {
	rates := parseRates(b, *ratesArg)
	dir := b.TempDir()
	engines := strings.Split(*prebuilt, ",")
	if *prebuilt == "" {
		engines = []string{build(b, dir, "spanbench-runner", "./cmd/spanbench", "-tags", "runner")}
	}
	bare := build(b, dir, "bareloop", "./internal/openloop/bareloop")
	evict(b, append([]string{bare}, engines...)...)
	emulatortest.NoMetadataServer(b) // the children inherit it
	for b.Loop() {
		var table strings.Builder
		fmt.Fprintf(&table, "\nopen loop, stale point reads, %v per side, %d pairs per rate; RSS is each process's own (procrss): at its start instant (ready), its peak, and the peak of its anonymous part\n",
			*loadFor, *pairs)
		fmt.Fprintln(&table, "rate/s  pair  engine          engine µs/read (usr+sys), csw  bare µs/read (usr+sys), csw  cpu ratio  engine RSS ready/peak/anon  bare RSS ready/peak/anon  RSS ratio  engine p99, missed, errors  bare errors  load avg")
		for _, rate := range rates {
			compareAt(b, &table, dir, engines, bare, rate)
		}
		fmt.Print(table.String()) // b.Log would truncate it
	}
}

// compareAt runs the pairs at one rate, adds their rows and medians to the
// table and reports the medians of the first engine binary.
func compareAt(b *testing.B, table *strings.Builder, dir string, engines []string, bare string, rate int) {
	b.Helper()
	cpuRatios, rssRatios, anonRatios := make([][]float64, len(engines)), make([][]float64, len(engines)), make([][]float64, len(engines))
	for p := range *pairs {
		bl, eng, load := runPair(b, dir, engines, bare, rate, p)
		for i, e := range eng {
			cr := e.perRead().Seconds() / bl.perRead().Seconds()
			rr, ar := float64(e.maxRSS)/float64(bl.maxRSS), float64(e.maxAnon)/float64(bl.maxAnon)
			cpuRatios[i], rssRatios[i], anonRatios[i] = append(cpuRatios[i], cr), append(rssRatios[i], rr), append(anonRatios[i], ar)
			fmt.Fprintf(table, "%6d  %4d  %-18s  %30s  %30s  %9.2f  %9.1f/%.1f/%.1f MiB  %7.1f/%.1f/%.1f MiB  %9.2f  %10v, %d, %d  %d  %s\n",
				rate, p+1, filepath.Base(engines[i]), e.cpuColumn(), bl.cpuColumn(), cr, mib(e.readyRSS), mib(e.maxRSS), mib(e.maxAnon), mib(bl.readyRSS), mib(bl.maxRSS), mib(bl.maxAnon), rr,
				e.p99.Round(100*time.Microsecond), e.missed, e.errors, bl.errors, load)
		}
	}
	for i, e := range engines {
		c, r, a := cpuRatios[i], rssRatios[i], anonRatios[i]
		fmt.Fprintf(table, "%6d  %s: median cpu ratio %.2f (range %.2f-%.2f), median RSS ratio %.2f (range %.2f-%.2f), anonymous %.2f (range %.2f-%.2f)\n",
			rate, filepath.Base(e), median(c), slices.Min(c), slices.Max(c), median(r), slices.Min(r), slices.Max(r), median(a), slices.Min(a), slices.Max(a))
	}
	b.ReportMetric(median(cpuRatios[0]), fmt.Sprintf("cpu-ratio@%d/s", rate))
	b.ReportMetric(median(rssRatios[0]), fmt.Sprintf("rss-ratio@%d/s", rate))
	b.ReportMetric(median(anonRatios[0]), fmt.Sprintf("anon-ratio@%d/s", rate))
}

// runPair starts a fresh emulator with the dataset and runs the bare loop
// and each engine binary on it, in an order rotated by the pair's number.
func runPair(b *testing.B, dir string, engines []string, bare string, rate, pair int) (bl side, eng []side, load string) {
	b.Helper()
	emu, err := emulator.Start(context.Background(), emulator.Options{})
	if err != nil {
		b.Fatalf("start cloud spanner emulator: %v", err)
	}
	defer func() {
		if err := emu.Stop(); err != nil {
			b.Errorf("stop cloud spanner emulator: %v", err)
		}
	}()
	t := prepare(b, emu.Host())
	// Stale reads see the dataset only once their bound has passed since it
	// was loaded (EMULATOR.md).
	ready := time.Now().Add(15*time.Second + v1alpha1.StalenessMargin)
	load = loadAverage()
	eng = make([]side, len(engines))
	sides := len(engines) + 1
	for k := range sides {
		switch i := (pair + k) % sides; i {
		case len(engines):
			bl = runBareLoop(b, bare, t, rate, startAfter(ready))
		default:
			eng[i] = runSpanbench(b, dir, engines[i], t, rate, startAfter(ready))
		}
	}
	for i, e := range eng {
		if e.notFound > 0 || bl.notFound > 0 {
			b.Fatalf("reads found no row (%s %d, bare loop %d): they started before the dataset was visible", engines[i], e.notFound, bl.notFound)
		}
	}
	return bl, eng, load + "-" + loadAverage()
}

// startAfter is the start instant of a side launched now: lead from now,
// and not before ready.
func startAfter(ready time.Time) time.Time {
	if at := time.Now().Add(lead); at.After(ready) {
		return at
	}
	return ready
}

// prepare creates the instance, database and dataset on a fresh emulator.
func prepare(b *testing.B, host string) v1alpha1.TargetSpec {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nodes := int32(1)
	t := v1alpha1.TargetSpec{Project: "spanbench-bench", Database: "bench", EmulatorHost: host,
		Instance: v1alpha1.InstanceSpec{Name: "bench", Config: "regional-asia-northeast1", Nodes: &nodes}}
	spec := workloadSpec()
	schema, err := workload.SchemaFor(&spec, v1alpha1.DialectGoogleSQL)
	if err != nil {
		b.Fatal(err)
	}
	ep := endpoint.Emulator(host)
	if err := session.EnsureDatabase(ctx, ep, t, schema, true); err != nil {
		b.Fatalf("creating the database: %v", err)
	}
	s, err := session.Open(ctx, ep, t)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := dataset.Prepare(ctx, s.Client, schema, spec.Dataset, nil); err != nil {
		b.Fatalf("loading the dataset: %v", err)
	}
	return t
}

func workloadSpec() v1alpha1.WorkloadSpec {
	r := int64(rows)
	w := v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadYCSB, Dataset: v1alpha1.DatasetSpec{Rows: &r}}
	return w.Resolved()
}

// manifest is the engine side's BenchmarkRun: one stale point read.
func manifest(t v1alpha1.TargetSpec, rate int) string {
	return fmt.Sprintf(`apiVersion: bench.spanbench.io/v1alpha1
kind: BenchmarkRun
metadata: {name: %s}
spec:
  target:
    project: %s
    instance: {name: %s}
    database: %s
  workload:
    type: YCSB
    dataset: {rows: %d}
    operations:
      - {name: %s, type: Read, api: Read, weight: 1, staleness: {exact: 15s}}
    load: {rate: %d}
    duration: %s
    interval: 1s
`, runName, t.Project, t.Instance.Name, t.Database, rows, opName, rate, *loadFor)
}

// runSpanbench runs `spanbench run` from start and measures it.
func runSpanbench(b *testing.B, dir, bin string, t v1alpha1.TargetSpec, rate int, start time.Time) side {
	b.Helper()
	file, out := filepath.Join(dir, "run.yaml"), filepath.Join(dir, "result.json")
	if err := os.WriteFile(file, []byte(manifest(t, rate)), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "-f", file, "--endpoint", t.EmulatorHost, "--out", out,
		"--progress", "never", "--start", start.Format(time.RFC3339Nano))
	s := measure(b, cmd, start, rate)
	doc, err := result.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	c := doc.Overall.Counts
	s.reads, s.notFound, s.errors = c.OK+c.NotFound+c.ErrorCount(), c.NotFound, c.ErrorCount()
	s.missed = doc.Shards[0].Missed
	s.p99 = time.Duration(doc.Overall.Latency.P99) * time.Microsecond
	return s
}

// runBareLoop runs the bare loop from start and measures it.
func runBareLoop(b *testing.B, bin string, t v1alpha1.TargetSpec, rate int, start time.Time) side {
	b.Helper()
	cmd := exec.Command(bin, "-endpoint", t.EmulatorHost, "-project", t.Project, "-instance", t.Instance.Name,
		"-database", t.Database, "-rate", strconv.Itoa(rate), "-rows", strconv.Itoa(rows), "-duration", loadFor.String(),
		"-tag", v1alpha1.RequestTag(runName, opName), "-start", start.Format(time.RFC3339Nano))
	var stdout strings.Builder
	cmd.Stdout = &stdout
	s := measure(b, cmd, start, rate)
	if _, err := fmt.Sscanf(stdout.String(), "reads %d notfound %d errors %d", &s.reads, &s.notFound, &s.errors); err != nil {
		b.Fatalf("bare loop printed %q: %v", stdout.String(), err)
	}
	return s
}

// measure runs cmd, reads its CPU time just before start and takes the
// difference to its total at exit, with its RSS then and its peak (its
// own: rusage would count this process's memory, procrss). Context switches
// are counted from start to shortly before the end (a process's threads
// are gone once it has exited), per read at the target rate.
func measure(b *testing.B, cmd *exec.Cmd, start time.Time, rate int) side {
	b.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	rss := procrss.Start(cmd.Process.Pid, 5*time.Millisecond)
	time.Sleep(time.Until(start.Add(-20 * time.Millisecond)))
	ready, rerr := procrss.Current(cmd.Process.Pid)
	u0, s0, err := procCPU(cmd.Process.Pid)
	if err = errors.Join(err, rerr); err != nil {
		_ = cmd.Wait()
		b.Fatalf("%s exited before its start: %v\n%s", cmd.Path, err, stderr.String())
	}
	cs0 := contextSwitches(cmd.Process.Pid)
	window := *loadFor - 500*time.Millisecond
	time.Sleep(time.Until(start.Add(window)))
	cs := contextSwitches(cmd.Process.Pid) - cs0
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%s: %v\n%s", cmd.Path, err, stderr.String())
	}
	peaks := rss.Stop()
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	user, sys := time.Duration(ru.Utime.Nano())-u0, time.Duration(ru.Stime.Nano())-s0
	return side{cpu: user + sys, user: user, system: sys, readyRSS: ready, maxRSS: peaks.RSS, maxAnon: peaks.Anon,
		switches: float64(cs) / (float64(rate) * window.Seconds())}
}

// contextSwitches sums the voluntary and involuntary context switches of a
// process's threads.
func contextSwitches(pid int) int64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	var n int64
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue // the thread exited
		}
		for line := range strings.Lines(string(raw)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				c, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += c
			}
		}
	}
	return n
}

// procCPU reads a process's user and system time from /proc (clock ticks
// of 10 ms, the kernel's USER_HZ on Linux).
func procCPU(pid int) (user, sys time.Duration, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// Fields after the command name, which is in parentheses: state is
	// field 3, utime 14 and stime 15.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	u, err := strconv.ParseInt(f[11], 10, 64)
	if err != nil {
		return 0, 0, err
	}
	s, err := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u) * 10 * time.Millisecond, time.Duration(s) * 10 * time.Millisecond, err
}

// evict drops the binaries' pages from the page cache (written back
// first), so that every binary starts as one read from disk, as a pod's
// from its image: a binary written moments ago maps several MiB more of
// itself than the same file read back (52 against 63 MiB idle for one
// runner build here), which would set the RSS ratio by which side was
// built last.
func evict(b *testing.B, bins ...string) {
	b.Helper()
	for _, bin := range bins {
		f, err := os.Open(bin)
		if err != nil {
			b.Fatal(err)
		}
		err = errors.Join(f.Sync(), unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED), f.Close())
		if err != nil {
			b.Fatalf("evicting %s from the page cache: %v", bin, err)
		}
	}
}

// build compiles a main package of this module into dir, with flags,
// static and path-trimmed as `make build` and the image build it: a cgo
// build links C code (libpg_query's, through pg_query_go) and the C
// library, and maps tens of MiB more than the binary users run.
func build(b *testing.B, dir, name, pkg string, flags ...string) string {
	b.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", slices.Concat([]string{"build", "-trimpath", "-o", out}, flags, []string{pkg})...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, msg)
	}
	return out
}

func parseRates(b *testing.B, s string) []int {
	var rates []int
	for f := range strings.SplitSeq(s, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r < 1 {
			b.Fatalf("-openloop.rates %q: want positive integers", s)
		}
		rates = append(rates, r)
	}
	return rates
}

func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(raw))[0]
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func mib(n int64) float64            { return float64(n) / (1 << 20) }
