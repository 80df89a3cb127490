package v1alpha1

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func TestValidProcessingUnitsFollowsSpannerSteps(t *testing.T) {
	for pu, want := range map[int32]bool{0: false, 50: false, 100: true, 150: false, 900: true, 1000: true, 1500: false, 2000: true, 999: false} {
		if got := ValidProcessingUnits(pu); got != want {
			t.Errorf("ValidProcessingUnits(%d) = %v, want %v", pu, got, want)
		}
	}
}

func TestCapacityIsInProcessingUnits(t *testing.T) {
	for _, tc := range []struct {
		in   InstanceSpec
		want int32
	}{
		{InstanceSpec{Nodes: ptr.To[int32](3)}, 3000},
		{InstanceSpec{ProcessingUnits: ptr.To[int32](500)}, 500},
		{InstanceSpec{}, 0},
	} {
		if got := tc.in.Capacity(); got != tc.want {
			t.Errorf("Capacity() of %+v = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestTargetValidateNamesTheField(t *testing.T) {
	good := func() TargetSpec {
		return TargetSpec{Project: "my-project", Instance: InstanceSpec{Name: "bench"}, Database: "ycsb_1"}
	}
	if errs := (&TargetSpec{Project: "my-project", Instance: InstanceSpec{Name: "bench", Mode: InstanceEphemeral, Config: "asia1", ProcessingUnits: ptr.To[int32](300)}, Database: "db"}).Validate(field.NewPath("t")); len(errs) > 0 {
		t.Errorf("a good Ephemeral target does not validate: %v", errs)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*TargetSpec)
		field  string
	}{
		{"short project", func(s *TargetSpec) { s.Project = "abc" }, "t.project"},
		{"project with capitals", func(s *TargetSpec) { s.Project = "My-Project" }, "t.project"},
		{"missing database", func(s *TargetSpec) { s.Database = "" }, "t.database"},
		{"database ending in '-'", func(s *TargetSpec) { s.Database = "db-" }, "t.database"},
		{"instance name with '_'", func(s *TargetSpec) { s.Instance.Name = "my_instance" }, "t.instance.name"},
		{"unknown mode", func(s *TargetSpec) { s.Instance.Mode = "Shared" }, "t.instance.mode"},
		{"nodes and processing units", func(s *TargetSpec) {
			s.Instance.Nodes, s.Instance.ProcessingUnits = ptr.To[int32](1), ptr.To[int32](1000)
		}, "t.instance.processingUnits"},
		{"150 processing units", func(s *TargetSpec) { s.Instance.ProcessingUnits = ptr.To[int32](150) }, "t.instance.processingUnits"},
		{"1500 processing units", func(s *TargetSpec) { s.Instance.ProcessingUnits = ptr.To[int32](1500) }, "t.instance.processingUnits"},
		{"zero nodes", func(s *TargetSpec) { s.Instance.Nodes = ptr.To[int32](0) }, "t.instance.nodes"},
		{"ephemeral without size", func(s *TargetSpec) {
			s.Instance.Mode, s.Instance.Config = InstanceEphemeral, "asia1"
		}, "t.instance"},
		{"ephemeral without config", func(s *TargetSpec) {
			s.Instance.Mode, s.Instance.Nodes = InstanceEphemeral, ptr.To[int32](1)
		}, "t.instance"},
		{"unknown dialect", func(s *TargetSpec) { s.Dialect = "MySQL" }, "t.dialect"},
		{"credentials without a secret", func(s *TargetSpec) { s.Credentials = &CredentialsSpec{Key: "k"} }, "t.credentials.secretName"},
		{"unknown edition", func(s *TargetSpec) { s.Instance.Edition = "Premium" }, "t.instance.edition"},
		{"split keys and count", func(s *TargetSpec) {
			s.SplitPoints = &SplitPointsSpec{Keys: []string{"a"}, Count: ptr.To[int32](2)}
		}, "t.splitPoints"},
		{"empty split key", func(s *TargetSpec) { s.SplitPoints = &SplitPointsSpec{Keys: []string{""}} }, "t.splitPoints.keys[0]"},
		{"too many split points", func(s *TargetSpec) { s.SplitPoints = &SplitPointsSpec{Count: ptr.To[int32](MaxSplitPoints + 1)} }, "t.splitPoints.count"},
	} {
		s := good()
		tc.mutate(&s)
		errs := s.Validate(field.NewPath("t"))
		found := false
		for _, e := range errs {
			found = found || e.Field == tc.field
		}
		if !found {
			t.Errorf("%s: want an error at %s, got %v", tc.name, tc.field, errs)
		}
	}
}

func TestBothDialectsValidateAndEmptyMeansGoogleSQL(t *testing.T) {
	for _, d := range []Dialect{"", DialectGoogleSQL, DialectPostgreSQL} {
		s := TargetSpec{Project: "my-project", Instance: InstanceSpec{Name: "bench"}, Database: "ycsb_1", Dialect: d}
		if errs := s.Validate(field.NewPath("t")); len(errs) > 0 {
			t.Errorf("dialect %q is refused: %v", d, errs)
		}
	}
	for d, want := range map[Dialect]Dialect{"": DialectGoogleSQL, DialectGoogleSQL: DialectGoogleSQL, DialectPostgreSQL: DialectPostgreSQL} {
		if got := d.OrDefault(); got != want {
			t.Errorf("Dialect(%q).OrDefault() = %q, want %q", d, got, want)
		}
	}
}

func TestEditionAPINameIsSpannersSpelling(t *testing.T) {
	for e, want := range map[Edition]string{EditionStandard: "STANDARD", EditionEnterprise: "ENTERPRISE", EditionEnterprisePlus: "ENTERPRISE_PLUS", "": ""} {
		if got := e.APIName(); got != want {
			t.Errorf("Edition(%q).APIName() = %q, want %q", e, got, want)
		}
	}
}
