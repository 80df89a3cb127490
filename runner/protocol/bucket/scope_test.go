package bucket_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spanbench/spanbench/runner/protocol/bucket"
)

// outsideKeys are keys a run's scoped bucket must refuse: another run's
// (same name, another UID; another name; another namespace), keys that
// climb out of the prefix or start at the root, and keys that are not
// clean.
func outsideKeys(prefix string) map[string]string {
	return map[string]string{
		"another run's UID":    bucket.ShardKey("team", "r1", "uid-2", 0),
		"another run":          bucket.ShardKey("team", "r2", "uid-1", 0),
		"another namespace":    bucket.ShardKey("other", "r1", "uid-1", 0),
		"climbing out":         prefix + "../../r2/uid-2/shard-0",
		"climbing to the root": prefix + "../../../../etc/passwd",
		"absolute":             "/" + prefix + "shard-0",
		"a '.' segment":        prefix + "./shard-0",
		"an empty segment":     prefix + "/shard-0",
		"a backslash":          prefix + `..\shard-0`,
		"a control character":  prefix + "shard-0\n",
		"the prefix itself":    prefix,
		"empty":                "",
	}
}

// TestScopedBucketWritesOnlyUnderItsRun: a runner's bucket, scoped to its
// run, writes its own shard's key and refuses every key outside its
// prefix before anything reaches the store.
func TestScopedBucketWritesOnlyUnderItsRun(t *testing.T) {
	b, dir := openDir(t)
	prefix := bucket.RunPrefix("team", "r1", "uid-1")
	run, err := b.Scope(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := write(t, run, bucket.ShardKey("team", "r1", "uid-1", 0), []byte("mine"), 1<<20); err != nil {
		t.Fatalf("writing the run's own shard: %v", err)
	}
	for what, key := range outsideKeys(prefix) {
		_, err := write(t, run, key, []byte("not mine"), 1<<20)
		var oe *bucket.ObjectError
		if !errors.As(err, &oe) {
			t.Errorf("%s: writing %q: %v; want an *ObjectError refusing the key", what, key, err)
		}
	}
	// Only the run's own object is in the store.
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return nil
	})
	if len(files) != 1 || files[0] != filepath.FromSlash(bucket.ShardKey("team", "r1", "uid-1", 0)) {
		t.Errorf("the store holds %v; want only the run's own shard", files)
	}
	if _, err := run.DeletePrefix(context.Background(), bucket.RunPrefix("team", "r2", "uid-2")); !errors.Is(err, bucket.ErrOutsideScope) {
		t.Errorf("deleting another run's prefix: %v; want ErrOutsideScope", err)
	}
}

// TestScopedBucketReadsOnlyUnderItsRun: the manager reads a run's objects
// through a bucket scoped to the run, so a pointer naming another run's
// object (which exists and whose length and digest the pointer gives
// right) is refused, as are keys that are not clean.
func TestScopedBucketReadsOnlyUnderItsRun(t *testing.T) {
	b, _ := openDir(t)
	other, err := write(t, b, bucket.ShardKey("team", "r2", "uid-2", 0), []byte("theirs"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	prefix := bucket.RunPrefix("team", "r1", "uid-1")
	run, err := b.Scope(prefix)
	if err != nil {
		t.Fatal(err)
	}
	// Unscoped, the other run's object reads: the scope is what refuses it.
	if r, err := b.NewReader(context.Background(), other); err != nil {
		t.Fatalf("the unscoped bucket cannot read the object: %v", err)
	} else {
		_ = r.Close()
	}
	for what, key := range outsideKeys(prefix) {
		// Where the key is clean, put an object there, so that only the
		// scope can refuse it: reading a missing object fails anyway.
		p, werr := write(t, b, key, []byte("theirs"), 1<<20)
		if werr != nil {
			p = other
			p.Key = key
		}
		r, err := run.NewReader(context.Background(), p)
		if err == nil {
			_, _ = io.Copy(io.Discard, r)
			_ = r.Close()
		}
		var oe *bucket.ObjectError
		if !errors.As(err, &oe) || (werr == nil && !errors.Is(err, bucket.ErrOutsideScope)) {
			t.Errorf("%s: reading %q (stored: %v): %v; want an *ObjectError refusing the key as outside the scope", what, key, werr == nil, err)
		}
	}
}

// TestScopeIsOneRunsPrefix: a scope is namespace/name/uid/ and nothing
// else, so that no scope can cover several runs or climb out.
func TestScopeIsOneRunsPrefix(t *testing.T) {
	b, _ := openDir(t)
	for _, bad := range []string{"", "/", "team/", "team/r1/", "team/r1/uid-1", "team/r1/uid-1/x/", "../r1/uid-1/", "team/../uid-1/", "team/r1/../", "Team/r1/uid-1/", "team//uid-1/"} {
		if _, err := b.Scope(bad); err == nil {
			t.Errorf("Scope(%q) was accepted; want it refused", bad)
		}
	}
}

// TestARunsDirectoryBelongsToTheRunner: PrepareScopeDir makes the run's
// directory of a file:// bucket, mode 0700, owned by the runners' uid, so
// that a non-root runner that mounts only it can write its objects there
// and no other user can; CheckWritable refuses a directory the process
// cannot write in (a root-owned hostPath for a non-root manager).
func TestARunsDirectoryBelongsToTheRunner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a directory to another uid needs root; the manager runs as the runners' uid instead")
	}
	const runnerUID = 65532
	b, dir := openDir(t)
	run, err := b.Scope(bucket.RunPrefix("team", "r1", "uid-1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := run.ScopeDir(); got != "team/r1/uid-1" {
		t.Errorf("ScopeDir = %q; want team/r1/uid-1", got)
	}
	if err := run.PrepareScopeDir(runnerUID, runnerUID); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "team", "r1", "uid-1"))
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != runnerUID || st.Gid != runnerUID || fi.Mode().Perm() != 0o700 {
		t.Errorf("the run's directory is %v, uid %d, gid %d; want drwx------ of %d:%d", fi.Mode(), st.Uid, st.Gid, runnerUID, runnerUID)
	}
	// Idempotent: a second reconcile finds it as it is.
	if err := run.PrepareScopeDir(runnerUID, runnerUID); err != nil {
		t.Errorf("preparing it again: %v", err)
	}
	if err := b.PrepareScopeDir(runnerUID, runnerUID); err == nil {
		t.Errorf("an unscoped bucket prepared a directory; want a refusal")
	}
	if err := b.CheckWritable(); err != nil {
		t.Errorf("CheckWritable on a writable directory: %v", err)
	}
	// Root writes anywhere: a directory that is gone stands in for one
	// the process may not write in.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := b.CheckWritable(); err == nil || !strings.Contains(err.Error(), "not writable") {
		t.Errorf("CheckWritable on a missing directory: %v; want it refused as not writable", err)
	}
}
