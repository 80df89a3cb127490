// Package bucket is the results bucket: an object store the manager is
// configured with (--results-bucket), in which runners write their shard
// results and the controller the run's merged report, each as one object,
// when a run's results would not fit the API server's etcd (ConfigMap
// chunks, package chunks). A ConfigMap of the protocol still signals the
// result, with a Pointer to the object (its key, length and sha256), so
// that the controller's watches stay as they are.
//
// Two kinds of URL are allowed, through gocloud.dev/blob: gs://BUCKET[/PREFIX]
// (Cloud Storage, credentials from the environment: Workload Identity on
// GKE, never in the URL) and file:///DIR (a directory, for a local cluster
// with a volume mounted into the manager and the runner pods at DIR).
// Anything else is refused, so that no URL can make the manager or a
// runner reach another store or carry credentials.
package bucket

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcerrors"
	"gocloud.dev/gcp"
)

// Schemes of the URLs Open accepts.
const (
	SchemeGCS  = gcsblob.Scheme
	SchemeFile = fileblob.Scheme
)

// ParseURL checks a results bucket URL: gs://BUCKET[/PREFIX] or
// file:///DIR, with no user, password, query or fragment (nothing that
// could carry a credential or an option the manager did not choose).
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("results bucket %q is not a URL: %w", raw, err)
	}
	switch {
	case u.Scheme != SchemeGCS && u.Scheme != SchemeFile:
		return nil, fmt.Errorf("results bucket %q: scheme %q is not allowed (want %s:// or %s://)", raw, u.Scheme, SchemeGCS, SchemeFile)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return nil, fmt.Errorf("results bucket %q: a user, query or fragment is not allowed; credentials come from the environment (Workload Identity)", raw)
	case u.Scheme == SchemeGCS && u.Host == "":
		return nil, fmt.Errorf("results bucket %q names no bucket (want gs://BUCKET[/PREFIX])", raw)
	case u.Scheme == SchemeFile && (u.Host != "" || !path.IsAbs(u.Path) || path.Clean(u.Path) == "/"):
		return nil, fmt.Errorf("results bucket %q: want file:///DIR, an absolute directory other than /", raw)
	}
	return u, nil
}

// Bucket is an open results bucket, or one run's part of it (Scope).
type Bucket struct {
	b   *blob.Bucket
	url string
	// scope, when set, is the only prefix (RunPrefix) whose keys Write,
	// NewReader and DeletePrefix take.
	scope string
	// dir is a file:// bucket's directory; "" for gs://.
	dir string
}

// Open opens the results bucket at rawURL (ParseURL's). A directory is
// created if missing; its objects are written to a temporary file beside
// their key and renamed, so that a reader never sees half an object (on a
// mounted volume, a temporary file in /tmp could not be renamed across).
func Open(ctx context.Context, rawURL string) (*Bucket, error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	var b *blob.Bucket
	switch u.Scheme {
	case SchemeFile:
		b, err = fileblob.OpenBucket(path.Clean(u.Path), &fileblob.Options{
			CreateDir: true, NoTempDir: true, Metadata: fileblob.MetadataDontWrite,
		})
	default:
		b, err = openGCS(ctx, u.Host)
		if prefix := strings.Trim(u.Path, "/"); err == nil && prefix != "" {
			b = blob.PrefixedBucket(b, prefix+"/")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("opening results bucket %s: %w", rawURL, err)
	}
	bk := &Bucket{b: b, url: u.String()}
	if u.Scheme == SchemeFile {
		bk.dir = path.Clean(u.Path)
	}
	return bk, nil
}

// openGCS opens Cloud Storage bucket name with the environment's
// Application Default Credentials (Workload Identity on GKE), built here
// rather than through gocloud's URL registry, whose lazy opener reads
// STORAGE_EMULATOR_HOST from the process and prints to stdout when it
// finds no credentials: a missing credential is an error at start.
func openGCS(ctx context.Context, name string) (*blob.Bucket, error) {
	creds, err := gcp.DefaultCredentials(ctx)
	if err != nil {
		return nil, fmt.Errorf("no Google credentials (Workload Identity, or Application Default Credentials): %w", err)
	}
	client, err := gcp.NewHTTPClient(gcp.DefaultTransport(), gcp.CredentialsTokenSource(creds))
	if err != nil {
		return nil, err
	}
	return gcsblob.OpenBucket(ctx, client, name, nil)
}

// URL is the bucket's URL, as Open was given it.
func (b *Bucket) URL() string { return b.url }

// Close releases the bucket.
func (b *Bucket) Close() error { return b.b.Close() }

// Keys of a run's objects: every object of a run is under RunPrefix, which
// names the run's UID, so that a run deleted and created again under the
// same name never reads or deletes the objects of the one before.

// RunPrefix is the prefix of every object of run namespace/name (UID uid).
func RunPrefix(namespace, name, uid string) string {
	return namespace + "/" + name + "/" + uid + "/"
}

// ShardKey is the key of shard i's result.
func ShardKey(namespace, name, uid string, i int) string {
	return fmt.Sprintf("%sshard-%d", RunPrefix(namespace, name, uid), i)
}

// ReportKey is the key of the run's merged report.
func ReportKey(namespace, name, uid string) string {
	return RunPrefix(namespace, name, uid) + "report"
}

// ErrOutsideScope is the error of a key outside the bucket's scope
// (another run's). Write and NewReader return it, or a key that is not
// clean (one that climbs out with "..", or starts at the root), as an
// *ObjectError: nothing was read or written.
var ErrOutsideScope = errors.New("is outside the run's prefix")

// runPrefixSegment is one segment of a RunPrefix: a namespace or run name
// (a DNS label) or an object UID.
var runPrefixSegment = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Scope is b restricted to one run's objects: prefix must be a RunPrefix
// (namespace/name/uid/), and every key the result takes must be a clean
// key under it. The runner scopes its bucket to its run, and the manager
// scopes every read, write and deletion of a run's objects to that run, so
// that a key that came from a ConfigMap (which anyone who may edit
// ConfigMaps in the namespace may have edited) can never reach another
// run's objects. The scoped bucket shares b's store: close b, not it.
func (b *Bucket) Scope(prefix string) (*Bucket, error) {
	segs := strings.Split(strings.TrimSuffix(prefix, "/"), "/")
	if !strings.HasSuffix(prefix, "/") || len(segs) != 3 {
		return nil, fmt.Errorf("results bucket scope %.80q: want namespace/name/uid/", prefix)
	}
	for _, seg := range segs {
		if len(seg) > 63 || !runPrefixSegment.MatchString(seg) {
			return nil, fmt.Errorf("results bucket scope %.80q: segment %.80q is not a namespace, name or UID", prefix, seg)
		}
	}
	return &Bucket{b: b.b, url: b.url, scope: prefix, dir: b.dir}, nil
}

// ScopeDir is the directory of a scoped file:// bucket's run, relative to
// the bucket's directory (namespace/name/uid): what a runner pod mounts,
// and nothing above it. "" for gs:// or an unscoped bucket.
func (b *Bucket) ScopeDir() string {
	if b.dir == "" {
		return ""
	}
	return strings.TrimSuffix(b.scope, "/")
}

// PrepareScopeDir makes a scoped file:// bucket's run directory
// (ScopeDir), mode 0700 and owned by uid:gid, the runner pods' user: they
// mount only it, so the store itself keeps them from every other run's
// objects, and they can write in it although they do not run as root.
// A process running as root gives the directory to uid:gid; any other
// must be uid:gid itself (the manager and the runners share one uid). It
// does nothing for gs://, whose access is IAM's (docs/result-format.md).
func (b *Bucket) PrepareScopeDir(uid, gid int) error {
	if b.dir == "" {
		return nil
	}
	if b.scope == "" {
		return errors.New("preparing a run's directory needs a bucket scoped to the run")
	}
	d := filepath.Join(b.dir, filepath.FromSlash(b.ScopeDir()))
	if err := os.MkdirAll(d, 0o700); err != nil {
		return fmt.Errorf("making the run's results directory: %w", err)
	}
	switch euid := os.Geteuid(); {
	case euid == 0:
		if err := os.Chown(d, uid, gid); err != nil {
			return fmt.Errorf("giving the run's results directory %s to uid %d: %w", d, uid, err)
		}
	case euid != uid:
		return fmt.Errorf("the run's results directory %s belongs to uid %d, not to the runners' uid %d: run the manager as uid %d (the manifests do)", d, euid, uid, uid)
	}
	return os.Chmod(d, 0o700)
}

// CheckWritable says whether a file:// bucket's directory takes new
// entries: a directory the kubelet created for a hostPath volume belongs
// to root, and a manager that is not root could then prepare no run.
// Nothing for gs://.
func (b *Bucket) CheckWritable() error {
	if b.dir == "" {
		return nil
	}
	f, err := os.CreateTemp(b.dir, ".spanbench-writable-*")
	if err != nil {
		return fmt.Errorf("results bucket directory %s is not writable by uid %d (create it owned by the manager's and the runners' uid, 65532 in the manifests): %w", b.dir, os.Geteuid(), err)
	}
	_ = f.Close()
	return os.Remove(f.Name())
}

// checkKey refuses a key that is not clean (empty, too long, absolute,
// with an empty, "." or ".." segment, a backslash or a control
// character) or, in a scoped bucket, not under the scope.
func (b *Bucket) checkKey(key string) error {
	bad := key == "" || len(key) > maxKeyBytes || strings.HasPrefix(key, "/") || !utf8.ValidString(key) ||
		strings.ContainsFunc(key, func(r rune) bool { return r == '\\' || unicode.IsControl(r) })
	for _, seg := range strings.Split(key, "/") {
		bad = bad || seg == "" || seg == "." || seg == ".."
	}
	switch {
	case bad:
		return errors.New("is not a clean object key (no empty, '.' or '..' segment, no leading '/', no backslash or control character)")
	case b.scope != "" && !strings.HasPrefix(key, b.scope):
		return fmt.Errorf("%w %s", ErrOutsideScope, b.scope)
	}
	return nil
}

// ObjectError says object Key is missing or is not the one its pointer
// describes: the result's fault, not the store's, and final.
type ObjectError struct {
	Key string
	Err error
}

func (e *ObjectError) Error() string { return fmt.Sprintf("object %s %v", e.Key, e.Err) }

func (e *ObjectError) Unwrap() error { return e.Err }

// TooLargeError says an object would be longer than the most it may be.
type TooLargeError struct{ Max int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the result is more than %d MiB compressed, the most an object of the results bucket may take", e.Max>>20)
}

// Write stores the object key as write writes it, streamed: the bytes go
// to the store as they come, counted and hashed on the way, and the
// object appears (whole) only when write has returned and the store
// acknowledged it. More than max bytes is a *TooLargeError and no object.
// It returns the object's Pointer, for the ConfigMap that signals it.
func (b *Bucket) Write(ctx context.Context, key string, max int64, write func(io.Writer) error) (Pointer, error) {
	if err := b.checkKey(key); err != nil {
		return Pointer{}, &ObjectError{Key: key, Err: err}
	}
	// Cancelling the writer's context before Close aborts the write: no
	// partial object.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.b.NewWriter(wctx, key, &blob.WriterOptions{ContentType: "application/gzip"})
	if err != nil {
		return Pointer{}, fmt.Errorf("writing object %s: %w", key, err)
	}
	h := sha256.New()
	cw := &cappedWriter{w: io.MultiWriter(w, h), max: max}
	if err := write(cw); err != nil {
		cancel()
		_ = w.Close()
		return Pointer{}, err
	}
	if err := w.Close(); err != nil {
		return Pointer{}, fmt.Errorf("writing object %s: %w", key, err)
	}
	return Pointer{Key: key, Bytes: cw.n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// cappedWriter counts what passes and refuses more than max.
type cappedWriter struct {
	w      io.Writer
	n, max int64
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	if c.n+int64(len(p)) > c.max {
		return 0, &TooLargeError{Max: c.max}
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// NewReader reads the object p points at, streamed. Its length is
// checked first, against the pointer; its sha256 at its end: the reader's
// last Read before io.EOF fails instead when the bytes are not the ones
// the pointer records. Problems of the object (missing, another length or
// digest) are *ObjectError; others are the store's, which a retry may fix.
func (b *Bucket) NewReader(ctx context.Context, p Pointer) (io.ReadCloser, error) {
	if err := b.checkKey(p.Key); err != nil {
		return nil, &ObjectError{Key: p.Key, Err: err}
	}
	r, err := b.b.NewReader(ctx, p.Key, nil)
	switch {
	case gcerrors.Code(err) == gcerrors.NotFound:
		return nil, &ObjectError{Key: p.Key, Err: errors.New("is missing")}
	case err != nil:
		return nil, fmt.Errorf("reading object %s: %w", p.Key, err)
	}
	if r.Size() != p.Bytes {
		_ = r.Close()
		return nil, &ObjectError{Key: p.Key, Err: fmt.Errorf("is %d bytes; its pointer records %d", r.Size(), p.Bytes)}
	}
	return &verifyingReader{r: r, lr: io.LimitReader(r, p.Bytes), p: p, h: sha256.New()}, nil
}

// verifyingReader reads an object and checks its sha256 at its end.
type verifyingReader struct {
	r  *blob.Reader
	lr io.Reader
	p  Pointer
	h  interface {
		io.Writer
		Sum([]byte) []byte
	}
	n int64
}

func (v *verifyingReader) Read(b []byte) (int, error) {
	n, err := v.lr.Read(b)
	_, _ = v.h.Write(b[:n])
	v.n += int64(n)
	if errors.Is(err, io.EOF) {
		switch got := hex.EncodeToString(v.h.Sum(nil)); {
		case v.n != v.p.Bytes:
			return n, &ObjectError{Key: v.p.Key, Err: fmt.Errorf("ended after %d bytes; its pointer records %d", v.n, v.p.Bytes)}
		case got != v.p.SHA256:
			return n, &ObjectError{Key: v.p.Key, Err: fmt.Errorf("has sha256 %s; its pointer records %s", got, v.p.SHA256)}
		}
	}
	return n, err
}

func (v *verifyingReader) Close() error { return v.r.Close() }

// DeletePrefix deletes every object under prefix (RunPrefix) but the keys
// in except, and reports how many it deleted; an object already gone is
// not an error. One listing, then one call per object found: nothing
// when there is nothing to delete.
func (b *Bucket) DeletePrefix(ctx context.Context, prefix string, except ...string) (int, error) {
	if b.scope != "" && !strings.HasPrefix(prefix, b.scope) {
		return 0, fmt.Errorf("deleting objects under %.80q: %w %s", prefix, ErrOutsideScope, b.scope)
	}
	it := b.b.List(&blob.ListOptions{Prefix: prefix})
	n := 0
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("listing objects under %s: %w", prefix, err)
		}
		if o.IsDir || slices.Contains(except, o.Key) {
			continue
		}
		if err := b.b.Delete(ctx, o.Key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return n, fmt.Errorf("deleting object %s: %w", o.Key, err)
		}
		n++
	}
}
