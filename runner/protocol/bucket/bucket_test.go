package bucket_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/runner/protocol/bucket"
)

// TestOnlyGCSAndDirectoryURLsAreAllowed: a results bucket is gs:// or
// file:// with nothing that could carry a credential or an option.
func TestOnlyGCSAndDirectoryURLsAreAllowed(t *testing.T) {
	for _, ok := range []string{"gs://results", "gs://results/spanbench", "file:///var/spanbench/results"} {
		if _, err := bucket.ParseURL(ok); err != nil {
			t.Errorf("ParseURL(%q): %v; want it allowed", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"s3://results":                       "scheme",
		"https://storage.googleapis.com/r":   "scheme",
		"mem://":                             "scheme",
		"results":                            "scheme",
		"gs://results?access_id=x":           "query",
		"gs://user:secret@results":           "user",
		"gs:///spanbench":                    "names no bucket",
		"file://./relative":                  "absolute directory",
		"file:///":                           "absolute directory",
		"file:///var/results?create_dir=1":   "query",
		"file://host/var/results":            "absolute directory",
		"gs://results/x#fragment":            "fragment",
		"file:///var/results?metadata=other": "query",
	} {
		_, err := bucket.ParseURL(bad)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseURL(%q): %v; want a refusal saying %q", bad, err, want)
		}
	}
}

func openDir(t *testing.T) (*bucket.Bucket, string) {
	t.Helper()
	dir := t.TempDir()
	b, err := bucket.Open(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b, dir
}

func write(t *testing.T, b *bucket.Bucket, key string, data []byte, max int64) (bucket.Pointer, error) {
	t.Helper()
	return b.Write(context.Background(), key, max, func(w io.Writer) error {
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 1000)
			if _, err := w.Write(rest[:n]); err != nil {
				return err
			}
			rest = rest[n:]
		}
		return nil
	})
}

// TestAnObjectReadsBackOnlyWhenItIsTheOneItsPointerRecords: an object
// written in pieces reads back whole; truncated, altered or missing it
// is an *ObjectError naming it; over its bound it is never written.
func TestAnObjectReadsBackOnlyWhenItIsTheOneItsPointerRecords(t *testing.T) {
	b, dir := openDir(t)
	data := bytes.Repeat([]byte("spanbench "), 10_000)
	p, err := write(t, b, "ns/run/uid/shard-0", data, 1<<20)
	if err != nil || p.Bytes != int64(len(data)) {
		t.Fatalf("writing: %+v, %v", p, err)
	}
	read := func(p bucket.Pointer) ([]byte, error) {
		r, err := b.NewReader(context.Background(), p)
		if err != nil {
			return nil, err
		}
		defer func() { _ = r.Close() }()
		return io.ReadAll(r)
	}
	if got, err := read(p); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("reading back: %d bytes, %v; want the %d written", len(got), err, len(data))
	}
	file := filepath.Join(dir, "ns", "run", "uid", "shard-0")
	altered := bytes.Clone(data)
	altered[len(altered)/2] ^= 1
	for what, c := range map[string]struct {
		content []byte
		want    string
	}{
		"altered":   {altered, "has sha256"},
		"truncated": {data[:len(data)-1], "its pointer records"},
		"missing":   {nil, "is missing"},
	} {
		if c.content == nil {
			_ = os.Remove(file)
		} else if err := os.WriteFile(file, c.content, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := read(p)
		var oe *bucket.ObjectError
		if !errors.As(err, &oe) || oe.Key != p.Key || !strings.Contains(err.Error(), c.want) {
			t.Errorf("reading an %s object: %v; want an *ObjectError naming %s saying %q", what, err, p.Key, c.want)
		}
	}
	var tooLarge *bucket.TooLargeError
	if _, err := write(t, b, "ns/run/uid/shard-1", data, int64(len(data))-1); !errors.As(err, &tooLarge) {
		t.Errorf("writing over the bound: %v; want a *TooLargeError", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ns", "run", "uid", "shard-1")); !os.IsNotExist(err) {
		t.Errorf("an object over its bound was left: %v", err)
	}
}

// TestDeletePrefixDeletesTheRunsObjectsAlone: a run's objects go, but
// the kept key and another run's objects.
func TestDeletePrefixDeletesTheRunsObjectsAlone(t *testing.T) {
	b, dir := openDir(t)
	keys := []string{bucket.ShardKey("ns", "run", "u1", 0), bucket.ShardKey("ns", "run", "u1", 1), bucket.ReportKey("ns", "run", "u1"),
		bucket.ShardKey("ns", "run", "u2", 0), bucket.ShardKey("ns", "run-2", "u3", 0)}
	for _, k := range keys {
		if _, err := write(t, b, k, []byte(k), 1<<10); err != nil {
			t.Fatal(err)
		}
	}
	n, err := b.DeletePrefix(context.Background(), bucket.RunPrefix("ns", "run", "u1"), bucket.ReportKey("ns", "run", "u1"))
	if err != nil || n != 2 {
		t.Fatalf("DeletePrefix: %d, %v; want the 2 shards deleted", n, err)
	}
	for i, k := range keys {
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(k)))
		if gone := os.IsNotExist(err); gone != (i < 2) {
			t.Errorf("object %s: gone %v after deleting run u1's shards", k, gone)
		}
	}
}
