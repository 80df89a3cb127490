//go:build !runner

package main

import (
	"context"
	"errors"
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"

	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
)

// resultsFlags name the results bucket (docs/result-format.md): where
// runners store shard results and the manager reports, as objects, when
// results would outgrow etcd.
type resultsFlags struct {
	url, hostPath, claim string
}

// store checks the flags and is what the runners are told of the bucket.
func (f *resultsFlags) store() (children.ResultsStore, error) {
	if f.url == "" {
		if f.hostPath != "" || f.claim != "" {
			return children.ResultsStore{}, errors.New("--results-host-path and --results-volume-claim need a file:// --results-bucket")
		}
		return children.ResultsStore{}, nil
	}
	u, err := bucket.ParseURL(f.url)
	if err != nil {
		return children.ResultsStore{}, fmt.Errorf("--results-bucket: %w", err)
	}
	s := children.ResultsStore{URL: f.url}
	switch {
	case u.Scheme != bucket.SchemeFile && (f.hostPath != "" || f.claim != ""):
		return s, fmt.Errorf("--results-host-path and --results-volume-claim are for a file:// --results-bucket, not %s://", u.Scheme)
	case u.Scheme != bucket.SchemeFile:
		return s, nil
	case (f.hostPath == "") == (f.claim == ""):
		return s, errors.New("a file:// --results-bucket needs one of --results-host-path and --results-volume-claim: the runner pods must mount the same directory")
	case f.hostPath != "" && !path.IsAbs(f.hostPath):
		return s, fmt.Errorf("--results-host-path %q: want an absolute path", f.hostPath)
	}
	s.MountPath = path.Clean(u.Path)
	if f.hostPath != "" {
		s.Volume = &corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: f.hostPath}}
	} else {
		s.Volume = &corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: f.claim}}
	}
	return s, nil
}

// openResults opens the results bucket the flags name; nil without one.
// A file:// bucket's directory must take the runs' directories: one the
// kubelet made root-owned for a hostPath stops the manager here, not each
// run later.
func openResults(ctx context.Context, s children.ResultsStore) (*bucket.Bucket, error) {
	if s.URL == "" {
		return nil, nil
	}
	b, err := bucket.Open(ctx, s.URL)
	if err != nil {
		return nil, err
	}
	if err := b.CheckWritable(); err != nil {
		_ = b.Close()
		return nil, err
	}
	return b, nil
}
