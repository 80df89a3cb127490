package preflight_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/spanbench/spanbench/internal/gcpadminfake"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/preflight"
)

const (
	project  = "projects/bench-proj"
	config   = project + "/instanceConfigs/regional-asia-northeast1"
	instance = project + "/instances/bench"
	database = instance + "/databases/ycsb"
)

// keyJSON is a service-account key whose secret parts must never reach a
// report.
const keyJSON = `{"type":"service_account","project_id":"bench-proj","private_key_id":"KEYID-0123456789abcdef",
"private_key":"-----BEGIN PRIVATE KEY-----\nSECRET-KEY-MATERIAL\n-----END PRIVATE KEY-----\n",
"client_email":"bench-runner@bench-proj.iam.gserviceaccount.com","client_id":"1234567890"}`

var creds = preflight.Credentials{JSON: []byte(keyJSON), Source: "key.json"}

// What each kind of run needs where, as docs/install.md lists it.
var (
	ephemeralOnProject = []string{"spanner.instanceConfigs.get", "spanner.instances.create", "spanner.instanceOperations.get",
		"spanner.instances.get", "spanner.instances.list", "spanner.instances.delete", "spanner.databases.create",
		"spanner.databases.get", "spanner.databases.getDdl", "spanner.databases.updateDdl", "spanner.databaseOperations.get",
		"spanner.sessions.create", "spanner.sessions.delete", "spanner.databases.write",
		"spanner.databases.beginOrRollbackReadWriteTransaction", "spanner.databases.read", "spanner.databases.select",
		"spanner.databases.beginReadOnlyTransaction"}
	dataOnDatabase = []string{"spanner.databases.get", "spanner.databases.getDdl", "spanner.databases.updateDdl",
		"spanner.databaseOperations.get", "spanner.sessions.create", "spanner.sessions.delete", "spanner.databases.write",
		"spanner.databases.beginOrRollbackReadWriteTransaction", "spanner.databases.read", "spanner.databases.select",
		"spanner.databases.beginReadOnlyTransaction"}
	existingOnProject  = []string{"spanner.instanceConfigs.get"}
	existingOnInstance = []string{"spanner.instances.get"}
)

func ephemeral() preflight.Target {
	return preflight.Target{Project: "bench-proj", Instance: "bench", Database: "ycsb", Config: "regional-asia-northeast1",
		Ephemeral: true, ProcessingUnits: 3000, ServerStats: true}
}

func existing() preflight.Target {
	t := ephemeral()
	t.Ephemeral, t.ProcessingUnits = false, 0
	return t
}

// world is a stand-in where the configuration exists, and opts reach it.
func world(t *testing.T) (*gcpadminfake.StandIn, []preflight.Option) {
	s := gcpadminfake.Start(t)
	s.AddConfig(config)
	return s, []preflight.Option{
		preflight.Spanner(endpoint.Cloud(s.Addr(), s.ClientOptions()...)),
		preflight.ResourceManager(s.Addr(), s.ClientOptions()...),
		preflight.WithCredentials(creds),
		preflight.NodeQuota(10),
	}
}

func text(t *testing.T, r preflight.Report) string {
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func missingNames(r preflight.Report) []string {
	var out []string
	for _, m := range r.Missing() {
		out = append(out, m.Resource+" "+m.Name+" "+m.Role)
	}
	return out
}

func TestEphemeralAllGrantedPasses(t *testing.T) {
	s, opts := world(t)
	s.Grant(project, ephemeralOnProject...)
	r := preflight.Check(context.Background(), ephemeral(), opts...)
	if !r.OK() {
		t.Fatalf("all granted, yet the preflight failed:\n%s", text(t, r))
	}
	out := text(t, r)
	if !strings.Contains(out, "bench-runner@bench-proj.iam.gserviceaccount.com") || !strings.Contains(out, "Cloud Spanner (127.0.0.1:") {
		t.Errorf("the report names neither the service account nor the Cloud endpoint:\n%s", out)
	}
}

func TestExistingAllGrantedPasses(t *testing.T) {
	s, opts := world(t)
	s.AddInstance(instance, config, 1000)
	s.AddDatabase(database)
	s.Grant(project, existingOnProject...)
	s.Grant(instance, existingOnInstance...)
	s.Grant(database, dataOnDatabase...)
	if r := preflight.Check(context.Background(), existing(), opts...); !r.OK() {
		t.Fatalf("all granted, yet the preflight failed:\n%s", text(t, r))
	}
}

// oneMissing grants all of want on resource but one, for each one in
// turn, and expects exactly that one reported, with its role.
func oneMissing(t *testing.T, tg preflight.Target, resource string, want []string, setup func(*gcpadminfake.StandIn)) {
	t.Helper()
	for _, drop := range want {
		t.Run(drop, func(t *testing.T) {
			s, opts := world(t)
			setup(s)
			s.Grant(resource, slices.DeleteFunc(slices.Clone(want), func(p string) bool { return p == drop })...)
			r := preflight.Check(context.Background(), tg, opts...)
			if r.OK() {
				t.Fatalf("%s withheld on %s, yet the preflight passed:\n%s", drop, resource, text(t, r))
			}
			role := preflight.RoleFor(drop)
			if role == "" {
				t.Fatalf("no role is known to grant %s", drop)
			}
			if got, w := missingNames(r), []string{resource + " " + drop + " " + role}; !slices.Equal(got, w) {
				t.Fatalf("missing = %q, want %q\n%s", got, w, text(t, r))
			}
			if out := text(t, r); !strings.Contains(out, drop) || !strings.Contains(out, role) {
				t.Errorf("the text names not %s and %s:\n%s", drop, role, out)
			}
		})
	}
}

func TestEachProjectPermissionMissing(t *testing.T) {
	oneMissing(t, ephemeral(), project, ephemeralOnProject, func(*gcpadminfake.StandIn) {})
}

func TestEachInstancePermissionMissing(t *testing.T) {
	// The database is missing: the run creates it, under the instance's grants.
	want := append(append([]string{}, existingOnInstance...), dataOnDatabase...)
	want = append(want, "spanner.databases.create")
	oneMissing(t, existing(), instance, want, func(s *gcpadminfake.StandIn) {
		s.AddInstance(instance, config, 1000)
		s.Grant(project, existingOnProject...)
	})
}

func TestEachDatabasePermissionMissing(t *testing.T) {
	oneMissing(t, existing(), database, dataOnDatabase, func(s *gcpadminfake.StandIn) {
		s.AddInstance(instance, config, 1000)
		s.AddDatabase(database)
		s.Grant(project, existingOnProject...)
		s.Grant(instance, existingOnInstance...)
	})
}

func TestMonitoringPermissionMissing(t *testing.T) {
	tg := existing()
	tg.ServerMetrics = true
	oneMissing(t, tg, project, append(slices.Clone(existingOnProject), "monitoring.timeSeries.list"), func(s *gcpadminfake.StandIn) {
		s.AddInstance(instance, config, 1000)
		s.AddDatabase(database)
		s.Grant(instance, existingOnInstance...)
		s.Grant(database, dataOnDatabase...)
	})
}

func TestSplitPointsNeedTheirPermission(t *testing.T) {
	tg := ephemeral()
	tg.SplitPoints = true
	oneMissing(t, tg, project, append(slices.Clone(ephemeralOnProject), "spanner.databases.addSplitPoints"), func(*gcpadminfake.StandIn) {})
}

func result(t *testing.T, r preflight.Report, name string) preflight.Result {
	t.Helper()
	i := slices.IndexFunc(r.Results, func(c preflight.Result) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("no %q check in:\n%s", name, text(t, r))
	}
	return r.Results[i]
}

func TestMissingConfigFails(t *testing.T) {
	s, opts := world(t)
	s.Grant(project, ephemeralOnProject...)
	tg := ephemeral()
	tg.Config = "regional-nowhere1"
	r := preflight.Check(context.Background(), tg, opts...)
	if c := result(t, r, preflight.CheckInstanceConfig); c.Status != preflight.Fail || !strings.Contains(c.Detail, "regional-nowhere1 does not exist") {
		t.Fatalf("a missing configuration: %+v", c)
	}
	if r.OK() {
		t.Fatal("a missing configuration passed")
	}
}

func TestMissingExistingInstanceFails(t *testing.T) {
	s, opts := world(t)
	s.Grant(project, existingOnProject...)
	s.Grant(project, "spanner.instances.get")
	r := preflight.Check(context.Background(), existing(), opts...)
	if c := result(t, r, preflight.CheckInstance); c.Status != preflight.Fail || !strings.Contains(c.Detail, "does not exist") {
		t.Fatalf("a missing Existing instance: %+v", c)
	}
}

func TestQuota(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quota int32
		want  preflight.Status
	}{
		{"fits", 8, preflight.Pass},      // 5000 in use + 3000 asked = 8 nodes
		{"too small", 7, preflight.Fail}, // one node short
		{"not given", 0, preflight.Skipped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, opts := world(t)
			s.Grant(project, ephemeralOnProject...)
			s.AddInstance(project+"/instances/other", config, 5000)
			s.AddInstance(project+"/instances/elsewhere", project+"/instanceConfigs/nam6", 9000) // another configuration's quota
			r := preflight.Check(context.Background(), ephemeral(), append(opts, preflight.NodeQuota(tc.quota))...)
			if c := result(t, r, preflight.CheckNodeQuota); c.Status != tc.want {
				t.Fatalf("quota %d nodes: %s, want %s (%s)", tc.quota, c.Status, tc.want, c.Detail)
			}
			if r.OK() != (tc.want != preflight.Fail) {
				t.Fatalf("OK() = %v with quota %s:\n%s", r.OK(), tc.want, text(t, r))
			}
		})
	}
}

func TestNoCredentialsFails(t *testing.T) {
	s, opts := world(t)
	s.Grant(project, ephemeralOnProject...)
	r := preflight.Check(context.Background(), ephemeral(), append(opts, preflight.WithCredentials(preflight.Credentials{}))...)
	if c := result(t, r, preflight.CheckCredentials); c.Status != preflight.Fail || !strings.Contains(c.Detail, "no credentials found") {
		t.Fatalf("no credentials: %+v", c)
	}
	if c := result(t, r, preflight.CheckProjectIAM); c.Status != preflight.Skipped {
		t.Errorf("IAM asked without an identity: %+v", c)
	}
}

func TestReportHoldsNoKeyMaterial(t *testing.T) {
	for _, tc := range []struct {
		name string
		js   string
	}{
		{"a key", keyJSON},
		{"a key of an unknown type", strings.Replace(keyJSON, `"service_account"`, `"mystery"`, 1)},
		{"a broken key", keyJSON[:len(keyJSON)-3]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, opts := world(t)
			s.Grant(project, ephemeralOnProject...)
			r := preflight.Check(context.Background(), ephemeral(),
				append(opts, preflight.WithCredentials(preflight.Credentials{JSON: []byte(tc.js), Source: "key.json"}))...)
			out := text(t, r)
			for _, secret := range []string{"SECRET-KEY-MATERIAL", "PRIVATE KEY", "KEYID-0123456789abcdef", "1234567890"} {
				if strings.Contains(out, secret) {
					t.Fatalf("the report holds %q:\n%s", secret, out)
				}
			}
		})
	}
}

func TestEmulatorSkipsIAM(t *testing.T) {
	// Nothing listens there: the emulator is said, and said unreachable.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r := preflight.Check(ctx, ephemeral(), preflight.Spanner(endpoint.Emulator("127.0.0.1:1")))
	if !r.Emulator || !strings.Contains(r.Endpoint, "emulator") {
		t.Fatalf("the emulator is not said: %+v", r)
	}
	if c := result(t, r, preflight.CheckEndpoint); c.Status != preflight.Fail {
		t.Fatalf("an emulator that does not answer: %+v", c)
	}
}

// TestGoogleNotAnsweringIsToldFromARefusal: a check Google did not answer
// (Unavailable, DeadlineExceeded, ResourceExhausted) fails the report as
// transient, which the manager retries; any other code is a refusal. Each
// method a check calls answers each code in turn (the Go client's own
// retries of Unavailable and DeadlineExceeded on reads are why those reads
// are failed with ResourceExhausted only: they would retry until the
// call's timeout).
func TestGoogleNotAnsweringIsToldFromARefusal(t *testing.T) {
	transient := map[codes.Code]bool{codes.Unavailable: true, codes.DeadlineExceeded: true, codes.ResourceExhausted: true,
		codes.PermissionDenied: false, codes.NotFound: false, codes.InvalidArgument: false, codes.FailedPrecondition: false, codes.Internal: false}
	for _, tc := range []struct {
		method string
		check  string
		tg     preflight.Target
		codes  []codes.Code
	}{
		{gcpadminfake.MethodProjectTestIam, preflight.CheckProjectIAM, ephemeral(), slices.Collect(maps.Keys(transient))},
		{gcpadminfake.MethodInstanceTestIam, preflight.CheckInstanceIAM, existing(), slices.Collect(maps.Keys(transient))},
		{gcpadminfake.MethodDatabaseTestIam, preflight.CheckDatabaseIAM, existing(), slices.Collect(maps.Keys(transient))},
		{gcpadminfake.MethodGetInstance, preflight.CheckInstance, existing(), []codes.Code{codes.ResourceExhausted, codes.Internal}},
		{gcpadminfake.MethodGetInstanceConfig, preflight.CheckInstanceConfig, ephemeral(), []codes.Code{codes.ResourceExhausted, codes.Internal}},
		{gcpadminfake.MethodGetDatabase, preflight.CheckDatabase, existing(), []codes.Code{codes.ResourceExhausted}},
		{gcpadminfake.MethodListInstances, preflight.CheckNodeQuota, ephemeral(), []codes.Code{codes.ResourceExhausted, codes.Internal}},
	} {
		for _, code := range tc.codes {
			t.Run(tc.check+"/"+code.String(), func(t *testing.T) {
				s, opts := world(t)
				s.AddInstance(instance, config, 1000)
				s.AddDatabase(database)
				s.Grant(project, ephemeralOnProject...)
				s.Fail(tc.method, code, -1)
				r := preflight.Check(context.Background(), tc.tg, opts...)
				c := result(t, r, tc.check)
				if c.Status != preflight.Fail || c.Transient != transient[code] {
					t.Fatalf("%s answering %s: %s transient=%v, want FAIL transient=%v\n%s", tc.method, code, c.Status, c.Transient, transient[code], text(t, r))
				}
				if r.OK() || r.Transient() != transient[code] {
					t.Fatalf("%s answering %s: report OK=%v Transient=%v, want false and %v\n%s", tc.method, code, r.OK(), r.Transient(), transient[code], text(t, r))
				}
				if !strings.Contains(c.Detail, code.String()) {
					t.Errorf("the check does not say what Google answered (%s): %s", code, c.Detail)
				}
			})
		}
	}
}

// TestARefusalBesideAnUnansweredCheckIsARefusal: asking again cannot
// pass a report that also holds a refusal (here a missing instance
// configuration), so it is not transient.
func TestARefusalBesideAnUnansweredCheckIsARefusal(t *testing.T) {
	s, opts := world(t)
	s.Grant(project, ephemeralOnProject...)
	s.Fail(gcpadminfake.MethodProjectTestIam, codes.Unavailable, -1)
	tg := ephemeral()
	tg.Config = "regional-nowhere1"
	r := preflight.Check(context.Background(), tg, opts...)
	if c := result(t, r, preflight.CheckProjectIAM); !c.Transient {
		t.Fatalf("the unanswered project permissions are not transient: %+v", c)
	}
	if r.Transient() {
		t.Fatalf("a report with a missing configuration is transient:\n%s", text(t, r))
	}
	if out := text(t, r); !strings.Contains(out, "fix them") {
		t.Errorf("the verdict does not ask for a fix:\n%s", out)
	}
}

// TestAnUnansweredReportSaysAskAgain: the text of a transient report
// says Google did not answer, and asks for the preflight again.
func TestAnUnansweredReportSaysAskAgain(t *testing.T) {
	s, opts := world(t)
	s.Grant(project, ephemeralOnProject...)
	s.Fail(gcpadminfake.MethodProjectTestIam, codes.Unavailable, 1)
	r := preflight.Check(context.Background(), ephemeral(), opts...)
	out := text(t, r)
	for _, want := range []string{"Google did not answer: asking again may pass", "run the preflight again"} {
		if !strings.Contains(out, want) {
			t.Errorf("the text does not say %q:\n%s", want, out)
		}
	}
	if r = preflight.Check(context.Background(), ephemeral(), opts...); !r.OK() {
		t.Fatalf("asked again once Google answers, the preflight still fails:\n%s", text(t, r))
	}
}
