package v1alpha1

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The patterns of target_types.go's markers, for Validate.
var (
	projectPattern  = regexp.MustCompile(`^[a-z][a-z0-9-]*[a-z0-9]$`)
	instancePattern = regexp.MustCompile(`^[a-z][a-z0-9-]*[a-z0-9]$`)
	databasePattern = regexp.MustCompile(`^[a-z][a-z0-9_-]*[a-z0-9]$`)
)

// NodeProcessingUnits is the compute capacity of one Spanner node.
const NodeProcessingUnits = 1000

// ValidProcessingUnits reports whether Spanner accepts pu as an instance's
// compute capacity: 100 to 900 in steps of 100, then multiples of 1000.
func ValidProcessingUnits(pu int32) bool {
	if pu < 100 {
		return false
	}
	if pu < NodeProcessingUnits {
		return pu%100 == 0
	}
	return pu%NodeProcessingUnits == 0
}

// Capacity is the instance's size in processing units, from nodes or
// processingUnits; 0 when neither is set (an Existing instance used as it
// is).
func (in *InstanceSpec) Capacity() int32 {
	switch {
	case in.ProcessingUnits != nil:
		return *in.ProcessingUnits
	case in.Nodes != nil:
		return *in.Nodes * NodeProcessingUnits
	}
	return 0
}

// Validate checks a target the way the API server's schema and CEL rules
// do. It accepts a spec before or after defaulting.
func (t *TargetSpec) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, name(path.Child("project"), t.Project, 6, 30, projectPattern)...)
	errs = append(errs, t.Instance.validate(path.Child("instance"))...)
	errs = append(errs, name(path.Child("database"), t.Database, 2, 30, databasePattern)...)
	errs = append(errs, OneOf(path.Child("dialect"), t.Dialect, DialectGoogleSQL, DialectPostgreSQL)...)
	errs = append(errs, syntax(path.Child("emulatorHost"), t.EmulatorHost, 253, emulatorHostPattern)...)
	if c := t.Credentials; c != nil {
		p := path.Child("credentials")
		if c.SecretName == "" {
			errs = append(errs, field.Required(p.Child("secretName"), "the Secret holding the key file"))
		}
		errs = append(errs, syntax(p.Child("secretName"), c.SecretName, maxDNSSubdomainLength, dnsSubdomainPattern)...)
		errs = append(errs, syntax(p.Child("key"), c.Key, maxDNSSubdomainLength, secretKeyPattern)...)
	}
	if sp := t.SplitPoints; sp != nil {
		errs = append(errs, sp.validate(path.Child("splitPoints"))...)
	}
	return errs
}

func (sp *SplitPointsSpec) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if (sp.Keys != nil) == (sp.Count != nil) {
		errs = append(errs, field.Invalid(path, "", "set keys or count, not both"))
	}
	if sp.Keys != nil && len(sp.Keys) == 0 {
		errs = append(errs, field.Required(path.Child("keys"), "at least one key"))
	}
	if n := len(sp.Keys); n > MaxSplitPoints {
		errs = append(errs, field.TooMany(path.Child("keys"), n, MaxSplitPoints))
	}
	for i, k := range sp.Keys {
		if k == "" || len(k) > 256 {
			errs = append(errs, field.Invalid(path.Child("keys").Index(i), k, "must be 1 to 256 characters"))
		}
	}
	errs = append(errs, InRange(path.Child("count"), sp.Count, 1, MaxSplitPoints)...)
	return errs
}

// OrDefault is the dialect, or GoogleSQL when none is set.
func (d Dialect) OrDefault() Dialect {
	if d == "" {
		return DialectGoogleSQL
	}
	return d
}

// MaxSplitPoints bounds spec.target.splitPoints, keys or count.
const MaxSplitPoints = 1000

// APIName is the edition's name in the Spanner API (STANDARD, ENTERPRISE,
// ENTERPRISE_PLUS), "" for none.
func (e Edition) APIName() string {
	return map[Edition]string{EditionStandard: "STANDARD", EditionEnterprise: "ENTERPRISE", EditionEnterprisePlus: "ENTERPRISE_PLUS"}[e]
}

func (in *InstanceSpec) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, name(path.Child("name"), in.Name, 2, 64, instancePattern)...)
	errs = append(errs, OneOf(path.Child("mode"), in.Mode, InstanceExisting, InstanceEphemeral)...)
	errs = append(errs, syntax(path.Child("config"), in.Config, maxInstanceConfigLength, instanceConfigPattern)...)
	errs = append(errs, InRange(path.Child("nodes"), in.Nodes, 1, 1000)...)
	errs = append(errs, InRange(path.Child("processingUnits"), in.ProcessingUnits, 100, 1_000_000)...)
	errs = append(errs, OneOf(path.Child("edition"), in.Edition, EditionStandard, EditionEnterprise, EditionEnterprisePlus)...)
	if in.Nodes != nil && in.ProcessingUnits != nil {
		errs = append(errs, field.Forbidden(path.Child("processingUnits"), "set nodes or processingUnits, not both"))
	}
	if pu := in.ProcessingUnits; pu != nil && !ValidProcessingUnits(*pu) {
		errs = append(errs, field.Invalid(path.Child("processingUnits"), *pu, "must be a multiple of 100 below 1000 and of 1000 from 1000"))
	}
	if in.Mode == InstanceEphemeral && (in.Config == "" || (in.Nodes == nil && in.ProcessingUnits == nil)) {
		errs = append(errs, field.Required(path, "an Ephemeral instance needs config and nodes or processingUnits"))
	}
	return errs
}

// name checks a required, bounded, patterned name.
func name(path *field.Path, s string, lo, hi int, re *regexp.Regexp) field.ErrorList {
	switch {
	case s == "":
		return field.ErrorList{field.Required(path, "")}
	case len(s) < lo || len(s) > hi:
		return field.ErrorList{field.Invalid(path, s, fmt.Sprintf("must be %d to %d characters", lo, hi))}
	case !re.MatchString(s):
		return field.ErrorList{field.Invalid(path, s, "must match "+re.String())}
	}
	return nil
}
