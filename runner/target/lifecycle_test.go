package target

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner/admin/instance/apiv1/instancepb"

	"github.com/spanbench/spanbench/runner/emulator"
	"github.com/spanbench/spanbench/runner/workload"
)

func openAdmin(t *testing.T, e *emulator.Emulator) (context.Context, InstanceAdmin) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	a, err := OpenInstanceAdmin(ctx, e.Host())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return ctx, a
}

var owner = Owner{Cluster: "c1", Namespace: "team-a", Run: "nightly-asia1", UID: "0b9d7f4e-2c1a-4f7e-9b1e-7d2f0c8a9e11"}

// TestEnsureOwnedCreatesAdoptsAndRefuses walks an ephemeral instance's
// life on the emulator: created with the requested config, size and the
// owner's labels; found again (a restarted manager) without a second
// creation; refused to another owner; deleted only by its owner.
func TestEnsureOwnedCreatesAdoptsAndRefuses(t *testing.T) {
	ctx, a := openAdmin(t, emulator.StartForTest(t))
	in := Instance{Project: "spanbench-test", Instance: "eph", Config: "nam-eur-asia1", Nodes: 3, Edition: "ENTERPRISE_PLUS"}

	info, err := EnsureOwned(ctx, a, in, owner)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Created || info.Config != "nam-eur-asia1" || info.Nodes != 3 || info.ProcessingUnits != 3000 {
		t.Errorf("created instance reads %+v; want created, nam-eur-asia1, 3 nodes, 3000 processing units", info)
	}
	got, err := Describe(ctx, a, "spanbench-test", "eph")
	if err != nil || !got.Ready() || !maps.Equal(got.Labels, owner.Labels()) {
		t.Fatalf("Describe = %+v, %v; want READY with the owner's labels %v", got, err, owner.Labels())
	}

	again, err := EnsureOwned(ctx, a, in, owner)
	if err != nil || again.Created {
		t.Errorf("a second EnsureOwned by the same owner: created=%v err=%v; want adopted", again.Created, err)
	}

	other := owner
	other.UID = "ffffffff-2c1a-4f7e-9b1e-7d2f0c8a9e11"
	if _, err := EnsureOwned(ctx, a, in, other); !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), owner.UID) {
		t.Errorf("EnsureOwned by another owner: %v; want ErrNotOwned naming the owner", err)
	}
	if err := DeleteOwned(ctx, a, "spanbench-test", "eph", other); !errors.Is(err, ErrNotOwned) {
		t.Errorf("DeleteOwned by another owner: %v; want ErrNotOwned", err)
	}
	if _, err := Describe(ctx, a, "spanbench-test", "eph"); err != nil {
		t.Fatalf("another owner's DeleteOwned removed the instance: %v", err)
	}

	if err := DeleteOwned(ctx, a, "spanbench-test", "eph", owner); err != nil {
		t.Fatal(err)
	}
	if _, err := Describe(ctx, a, "spanbench-test", "eph"); !errors.Is(err, ErrInstanceNotFound) {
		t.Errorf("after DeleteOwned: %v; want ErrInstanceNotFound", err)
	}
	if err := DeleteOwned(ctx, a, "spanbench-test", "eph", owner); err != nil {
		t.Errorf("deleting an absent instance: %v; want nil (it is gone)", err)
	}
}

// TestEnsureOwnedNeverTakesAnUnlabelledInstance: an instance someone made
// by hand under the same name is neither adopted nor deleted.
func TestEnsureOwnedNeverTakesAnUnlabelledInstance(t *testing.T) {
	ctx, a := openAdmin(t, emulator.StartForTest(t))
	if err := a.CreateInstance(ctx, &instancepb.CreateInstanceRequest{Parent: "projects/p-test", InstanceId: "theirs",
		Instance: &instancepb.Instance{Config: "projects/p-test/instanceConfigs/asia1", DisplayName: "theirs", NodeCount: 1}}); err != nil {
		t.Fatal(err)
	}
	_, err := EnsureOwned(ctx, a, Instance{Project: "p-test", Instance: "theirs", Config: "asia1", Nodes: 1}, owner)
	if !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), "no spanbench labels") {
		t.Errorf("EnsureOwned over a hand-made instance: %v; want ErrNotOwned saying it has no spanbench labels", err)
	}
	if err := DeleteOwned(ctx, a, "p-test", "theirs", owner); !errors.Is(err, ErrNotOwned) {
		t.Errorf("DeleteOwned of a hand-made instance: %v; want ErrNotOwned", err)
	}
}

// TestListOwnedSeesOnlyThisClustersInstances lists instances of two
// clusters and one unlabelled.
func TestListOwnedSeesOnlyThisClustersInstances(t *testing.T) {
	ctx, a := openAdmin(t, emulator.StartForTest(t))
	mine, theirs := owner, owner
	theirs.Cluster = "c2"
	for id, o := range map[string]Owner{"mine": mine, "theirs": theirs} {
		if _, err := EnsureOwned(ctx, a, Instance{Project: "p-test", Instance: id, Config: "asia1", ProcessingUnits: 100}, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.CreateInstance(ctx, &instancepb.CreateInstanceRequest{Parent: "projects/p-test", InstanceId: "plain",
		Instance: &instancepb.Instance{Config: "projects/p-test/instanceConfigs/asia1", DisplayName: "plain", NodeCount: 1}}); err != nil {
		t.Fatal(err)
	}
	got, err := ListOwned(ctx, a, "p-test", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "mine" || got[0].ProcessingUnits != 100 || got[0].Nodes != 0 {
		t.Fatalf("ListOwned(c1) = %+v; want only instance mine, 100 processing units", got)
	}
	if err := DeleteOrphan(ctx, a, got[0]); err != nil {
		t.Fatal(err)
	}
	if got, _ := ListOwned(ctx, a, "p-test", "c1"); len(got) != 0 {
		t.Errorf("after DeleteOrphan ListOwned(c1) = %+v", got)
	}
}

func TestOwnerLabelsAreValidSpannerLabels(t *testing.T) {
	if err := owner.Validate(); err != nil {
		t.Error(err)
	}
	for _, bad := range []Owner{{Cluster: "C1", Namespace: "n", Run: "r", UID: "u"}, {Cluster: "c", Namespace: "n", Run: "r"},
		{Cluster: strings.Repeat("c", 64), Namespace: "n", Run: "r", UID: "u"}, {Cluster: "c.d", Namespace: "n", Run: "r", UID: "u"}} {
		if bad.Validate() == nil {
			t.Errorf("owner %+v validates; its labels are not valid Spanner labels", bad)
		}
	}
	if o, ok := OwnerOf(owner.Labels()); !ok || o != owner {
		t.Errorf("OwnerOf(Labels()) = %+v, %v", o, ok)
	}
	if _, ok := OwnerOf(map[string]string{LabelRun: "r"}); ok {
		t.Error("OwnerOf of a partial label set reports an owner")
	}
}

// TestSplitPointsAreUnsupportedOnTheEmulator records the emulator's answer
// so the controller's skip path stays honest.
func TestSplitPointsAreUnsupportedOnTheEmulator(t *testing.T) {
	ctx, ia, da := adminClients(t, emulator.StartForTest(t))
	if err := EnsureInstance(ctx, AdminOf(ia), Instance{Project: "p", Instance: "inst", Config: "emulator-config", Nodes: 1}); err != nil {
		t.Fatal(err)
	}
	if err := EnsureDatabase(ctx, da, "p", "inst", "db", []string{"CREATE TABLE usertable (id STRING(MAX) NOT NULL) PRIMARY KEY (id)"}); err != nil {
		t.Fatal(err)
	}
	err := AddSplitPoints(ctx, da, "p", "inst", "db", "usertable", EvenSplitKeys(3))
	if !errors.Is(err, ErrSplitPointsUnsupported) {
		t.Errorf("AddSplitPoints on the emulator: %v; want ErrSplitPointsUnsupported", err)
	}
}

// TestEvenSplitKeysCutTheWorkloadKeysEvenly checks the generated split
// points against the keys the YCSB workload really preloads.
func TestEvenSplitKeysCutTheWorkloadKeysEvenly(t *testing.T) {
	keys := EvenSplitKeys(3)
	if want := []string{"40000000", "80000000", "c0000000"}; strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Fatalf("EvenSplitKeys(3) = %v, want %v", keys, want)
	}
	const rows = 400_000 // 400 blocks of workload.BlockRows keys
	counts := make([]int, len(keys)+1)
	for k := int64(0); k < rows; k++ {
		key, r := workload.YCSBKey(k), 0
		for r < len(keys) && key >= keys[r] {
			r++
		}
		counts[r]++
	}
	for i, n := range counts {
		if n < rows/4/2 || n > rows/4*3/2 {
			t.Errorf("range %d of 4 holds %d of %d keys; want about a quarter (counts %v)", i, n, rows, counts)
		}
	}
	if len(EvenSplitKeys(0)) != 0 {
		t.Error("EvenSplitKeys(0) is not empty")
	}
}

func TestEditionOfMapsTheAPINames(t *testing.T) {
	for name, want := range map[string]instancepb.Instance_Edition{"": instancepb.Instance_EDITION_UNSPECIFIED,
		"STANDARD": instancepb.Instance_STANDARD, "ENTERPRISE_PLUS": instancepb.Instance_ENTERPRISE_PLUS} {
		if got, err := editionOf(name); err != nil || got != want {
			t.Errorf("editionOf(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	for _, bad := range []string{"EDITION_UNSPECIFIED", "Premium"} {
		if _, err := editionOf(bad); err == nil {
			t.Errorf("editionOf(%q) accepted an unknown edition", bad)
		}
	}
}
