package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// Control is what the controller tells every loader and runner of a run,
// under KeyControl in the control ConfigMap. Its JSON names are the Go
// names.
type Control struct {
	// Version is the protocol version of the controller that wrote it.
	Version int
	// Run is the BenchmarkRun's name; Namespace its namespace.
	Run, Namespace string
	// Shards is the number of runners.
	Shards int
	// Target is the Spanner target, without credentials.
	Target v1alpha1.TargetSpec
	// Workload is the resolved (defaulted) workload.
	Workload v1alpha1.WorkloadSpec
	// Region is where the runners run, recorded with the results.
	Region string
	// SpannerEndpoint is the Cloud Spanner API address (host:port) the
	// manager uses for this run, so that loaders and runners reach the same
	// regional or private endpoint; empty for an emulator target, whose
	// host is in Target.
	SpannerEndpoint string `json:",omitempty"`
	// LoadTables are the tables the loaders load, of a dataset with a
	// marker per table (a Custom workload's), parents first: the others'
	// markers matched, and they are not written. Empty loads every table.
	LoadTables []string `json:",omitempty"`
}

// EncodeControl is the control document as the control ConfigMap holds it,
// stamped with this Version. The target's credentials reference is dropped
// even when the caller left one in: pods get the key file only through
// their Secret volume, and a ConfigMap is readable far more widely than a
// Secret.
func EncodeControl(c Control) (string, error) {
	c.Version = Version
	c.Target.Credentials = nil // c is a copy; the caller's value is untouched
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encoding the control document of run %s: %w", c.Run, err)
	}
	return string(b), nil
}

// DecodeControl reads a control document strictly. It comes from a
// ConfigMap anyone with write access to the namespace can edit, so unknown
// or duplicate fields, trailing data, another protocol version, a shard
// count below one and an invalid target or workload are all refused,
// naming the field. The controller writes the resolved workload; it is
// resolved again here, once per pod start (a no-op on what the controller
// wrote), because the document may come from an edited ConfigMap or from a
// manager of another version (spec.runners.image), and nothing downstream
// may meet a nil default.
func DecodeControl(b []byte) (*Control, error) {
	var c Control
	strictErrs, err := sigsjson.UnmarshalStrict(b, &c, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return nil, fmt.Errorf("%s is not a control document: %w", KeyControl, err)
	}
	if len(strictErrs) > 0 {
		return nil, fmt.Errorf("%s is not a control document: %w", KeyControl, errors.Join(strictErrs...))
	}
	c.Workload = c.Workload.Resolved()
	if errs := c.validate(); len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w", KeyControl, errs.ToAggregate())
	}
	return &c, nil
}

// validate checks what a pod relies on. Field paths use the JSON names,
// which for Control are the Go names.
func (c *Control) validate() field.ErrorList {
	var errs field.ErrorList
	if c.Version != 0 && c.Version != Version {
		errs = append(errs, field.Invalid(field.NewPath("Version"), c.Version,
			fmt.Sprintf("this pod speaks protocol version %d; use the manager's runner image", Version)))
	}
	if c.Run == "" {
		errs = append(errs, field.Required(field.NewPath("Run"), "the run's name"))
	}
	if c.Shards < 1 {
		errs = append(errs, field.Invalid(field.NewPath("Shards"), c.Shards, "must be at least 1"))
	}
	errs = append(errs, c.Target.Validate(field.NewPath("Target"))...)
	errs = append(errs, customcheck.Workload(field.NewPath("Workload"), &c.Workload, c.Target.Dialect)...)
	return append(errs, c.validateLoadTables(field.NewPath("LoadTables"))...)
}

// validateLoadTables checks that each of LoadTables is a table of a Custom
// workload's dataset, named once: a list no longer than its tables.
func (c *Control) validateLoadTables(path *field.Path) field.ErrorList {
	if len(c.LoadTables) == 0 {
		return nil
	}
	if c.Workload.Custom == nil {
		return field.ErrorList{field.Forbidden(path, "only a Custom workload's dataset has a marker per table")}
	}
	var errs field.ErrorList
	for i, name := range c.LoadTables {
		known := slices.ContainsFunc(c.Workload.Custom.Tables, func(t v1alpha1.CustomTableSpec) bool { return strings.EqualFold(t.Name, name) })
		switch {
		case !known:
			errs = append(errs, field.NotSupported(path.Index(i), name, customTableNames(c.Workload.Custom)))
		case slices.Contains(c.LoadTables[:i], name):
			errs = append(errs, field.Duplicate(path.Index(i), name))
		}
	}
	return errs
}

func customTableNames(c *v1alpha1.CustomWorkloadSpec) []string {
	out := make([]string, len(c.Tables))
	for i, t := range c.Tables {
		out[i] = t.Name
	}
	return out
}

// EncodeStart is the control ConfigMap's data that publishes the common
// start time.
func EncodeStart(start time.Time) map[string]string {
	return map[string]string{KeyStartTime: formatTime(start)}
}

// DecodeStart reads the start time from the control ConfigMap's data; ok
// is false while none is published.
func DecodeStart(data map[string]string) (start time.Time, ok bool, err error) {
	s, ok := data[KeyStartTime]
	if !ok {
		return time.Time{}, false, nil
	}
	if start, err = parseTime(KeyStartTime, s); err != nil {
		return time.Time{}, false, err
	}
	return start, true, nil
}

// formatTime and parseTime are the protocol's timestamps: RFC 3339 in UTC.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseTime(key, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, &DecodeError{Key: key, Value: s, Problem: "is not an RFC 3339 time"}
	}
	return t, nil
}
