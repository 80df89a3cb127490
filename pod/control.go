package pod

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// DecodeControl reads a control document strictly. It comes from a
// ConfigMap anyone with write access to the namespace can edit, so unknown
// or duplicate fields, trailing data, a shard count below one and an
// invalid target or workload are all refused, naming the field. The
// controller writes the resolved workload; it is resolved again here, once
// per pod start (a no-op on what the controller wrote), because the
// document may come from an edited ConfigMap or from a manager of another
// version (spec.runners.image), and nothing downstream may meet a nil
// default.
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

// validate checks what a runner relies on. Field paths use the JSON names,
// which for Control are the Go names.
func (c *Control) validate() field.ErrorList {
	var errs field.ErrorList
	if c.Run == "" {
		errs = append(errs, field.Required(field.NewPath("Run"), "the run's name"))
	}
	if c.Shards < 1 {
		errs = append(errs, field.Invalid(field.NewPath("Shards"), c.Shards, "must be at least 1"))
	}
	errs = append(errs, c.Target.Validate(field.NewPath("Target"))...)
	errs = append(errs, c.Workload.Validate(field.NewPath("Workload"))...)
	return errs
}
