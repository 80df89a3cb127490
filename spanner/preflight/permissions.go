package preflight

import "slices"

// The IAM permissions a run uses, by what it does with them. Names are
// Google's (https://docs.cloud.google.com/spanner/docs/iam, "Permissions";
// monitoring.timeSeries.list:
// https://docs.cloud.google.com/iam/docs/roles-permissions/monitoring).
const (
	PermInstanceConfigsGet    = "spanner.instanceConfigs.get"
	PermInstancesCreate       = "spanner.instances.create"
	PermInstancesGet          = "spanner.instances.get"
	PermInstancesList         = "spanner.instances.list"
	PermInstancesDelete       = "spanner.instances.delete"
	PermInstanceOperationsGet = "spanner.instanceOperations.get"
	PermDatabasesCreate       = "spanner.databases.create"
	PermDatabaseOperationsGet = "spanner.databaseOperations.get"
	PermDatabasesGet          = "spanner.databases.get"
	PermDatabasesGetDdl       = "spanner.databases.getDdl"
	PermDatabasesUpdateDdl    = "spanner.databases.updateDdl"
	PermDatabasesSplitPoints  = "spanner.databases.addSplitPoints"
	PermSessionsCreate        = "spanner.sessions.create"
	PermSessionsDelete        = "spanner.sessions.delete"
	PermDatabasesRead         = "spanner.databases.read"
	PermDatabasesSelect       = "spanner.databases.select"
	PermDatabasesWrite        = "spanner.databases.write"
	PermBeginReadOnly         = "spanner.databases.beginReadOnlyTransaction"
	PermBeginReadWrite        = "spanner.databases.beginOrRollbackReadWriteTransaction"
	PermTimeSeriesList        = "monitoring.timeSeries.list"
)

// Predefined roles, from the least to the most privileged of those that
// matter here.
const (
	RoleSpannerViewer    = "roles/spanner.viewer"
	RoleDatabaseReader   = "roles/spanner.databaseReader"
	RoleDatabaseUser     = "roles/spanner.databaseUser"
	RoleDatabaseAdmin    = "roles/spanner.databaseAdmin"
	RoleSpannerAdmin     = "roles/spanner.admin"
	RoleMonitoringViewer = "roles/monitoring.viewer"
)

// roleGrants is which of the permissions above each predefined role
// holds, as Google lists the roles' permissions
// (https://docs.cloud.google.com/spanner/docs/iam#roles and
// https://docs.cloud.google.com/iam/docs/roles-permissions/spanner;
// roles/monitoring.viewer:
// https://docs.cloud.google.com/iam/docs/roles-permissions/monitoring).
// It is the one table RoleFor reads; the order is least privilege first.
var roleGrants = []struct {
	role  string
	perms []string
}{
	{RoleMonitoringViewer, []string{PermTimeSeriesList}},
	{RoleSpannerViewer, []string{PermTimeSeriesList, PermDatabasesGet, PermInstanceConfigsGet, PermInstancesGet, PermInstancesList}},
	{RoleDatabaseReader, []string{PermBeginReadOnly, PermDatabasesGet, PermDatabasesGetDdl, PermDatabasesRead, PermDatabasesSelect,
		PermInstancesGet, PermSessionsCreate, PermSessionsDelete}},
	{RoleDatabaseUser, []string{PermDatabaseOperationsGet, PermBeginReadWrite, PermBeginReadOnly, PermDatabasesGet, PermDatabasesGetDdl,
		PermDatabasesRead, PermDatabasesSelect, PermDatabasesUpdateDdl, PermDatabasesWrite, PermInstancesGet, PermSessionsCreate, PermSessionsDelete}},
	{RoleDatabaseAdmin, []string{PermTimeSeriesList, PermDatabaseOperationsGet, PermDatabasesSplitPoints, PermBeginReadWrite, PermBeginReadOnly,
		PermDatabasesCreate, PermDatabasesGet, PermDatabasesGetDdl, PermDatabasesRead, PermDatabasesSelect, PermDatabasesUpdateDdl,
		PermDatabasesWrite, PermInstancesGet, PermInstancesList, PermSessionsCreate, PermSessionsDelete}},
	{RoleSpannerAdmin, []string{PermTimeSeriesList, PermInstanceConfigsGet, PermInstancesCreate, PermInstancesGet, PermInstancesList,
		PermInstancesDelete, PermInstanceOperationsGet, PermDatabasesCreate, PermDatabaseOperationsGet, PermDatabasesGet,
		PermDatabasesGetDdl, PermDatabasesUpdateDdl, PermDatabasesSplitPoints, PermSessionsCreate, PermSessionsDelete,
		PermDatabasesRead, PermDatabasesSelect, PermDatabasesWrite, PermBeginReadOnly, PermBeginReadWrite}},
}

// RoleFor is the least privileged predefined role that grants perm, ""
// for a permission no role of the table holds.
func RoleFor(perm string) string {
	for _, r := range roleGrants {
		if slices.Contains(r.perms, perm) {
			return r.role
		}
	}
	return ""
}

// Permission is one permission a run needs, and why.
type Permission struct {
	// Name is the IAM permission.
	Name string
	// Use says what the run does with it.
	Use string
}

// need builds the list of what a check asks for.
type need []Permission

func (n *need) add(use string, perms ...string) {
	for _, p := range perms {
		if i := slices.IndexFunc(*n, func(q Permission) bool { return q.Name == p }); i >= 0 {
			(*n)[i].Use += "; " + use
			continue
		}
		*n = append(*n, Permission{Name: p, Use: use})
	}
}

func (n need) names() []string {
	out := make([]string, len(n))
	for i, p := range n {
		out[i] = p.Name
	}
	return out
}

// instancePermissions are what an Ephemeral run does to its instance:
// create it and wait for the operation, read it, find leftovers of its
// cluster (the manager's sweep lists the project's instances), delete it.
func instancePermissions(n *need) {
	n.add("create the Ephemeral instance", PermInstancesCreate, PermInstanceOperationsGet)
	n.add("read the instance's state", PermInstancesGet)
	n.add("find instances left by an interrupted run", PermInstancesList)
	n.add("delete the Ephemeral instance when the run ends", PermInstancesDelete)
}

// databasePermissions are what every run does in its database: create it
// when missing (create), check and apply the schema, open sessions, load
// the dataset and run the workload, and read SPANNER_SYS afterwards.
func databasePermissions(n *need, t Target, create bool) {
	if create {
		n.add("create the missing database", PermDatabasesCreate)
	}
	n.add("check the database's dialect", PermDatabasesGet)
	n.add("compare and apply the workload's schema", PermDatabasesGetDdl, PermDatabasesUpdateDdl, PermDatabaseOperationsGet)
	if t.SplitPoints {
		n.add("pre-split the main table (spec.target.splitPoints)", PermDatabasesSplitPoints)
	}
	n.add("open and close sessions", PermSessionsCreate, PermSessionsDelete)
	n.add("load the dataset and run the workload's writes", PermDatabasesWrite, PermBeginReadWrite)
	n.add("run the workload's reads", PermDatabasesRead, PermDatabasesSelect, PermBeginReadOnly)
	if t.ServerStats {
		n.add("read SPANNER_SYS statistics after the run", PermDatabasesSelect, PermBeginReadOnly)
	}
}
