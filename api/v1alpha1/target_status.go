package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// TargetStatus is the Spanner instance and database a run uses, as the
// manager read them through the admin API (not as the spec asked).
type TargetStatus struct {
	// instance is the instance id.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Instance string `json:"instance,omitempty"`

	// instanceConfig is the instance configuration Spanner reports, such as
	// regional-asia-northeast1 or asia1.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	InstanceConfig string `json:"instanceConfig,omitempty"`

	// nodes is the instance's node count, when it is sized in whole nodes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Nodes *int32 `json:"nodes,omitempty"`

	// processingUnits is the instance's compute capacity (1 node = 1000).
	// +optional
	// +kubebuilder:validation:Minimum=0
	ProcessingUnits *int32 `json:"processingUnits,omitempty"`

	// edition is the instance's edition as Spanner reports it (STANDARD,
	// ENTERPRISE, ENTERPRISE_PLUS); absent when it does not say (the
	// emulator).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Edition string `json:"edition,omitempty"`

	// instanceState is the instance's state when last read: CREATING or
	// READY.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	InstanceState string `json:"instanceState,omitempty"`

	// createOperation is the name of the long-running operation creating
	// the run's Ephemeral instance
	// ("projects/P/instances/I/operations/O") while Spanner works on it.
	// The manager polls it, also after a restart, so that a creation that
	// fails late fails the run with Spanner's error instead of being
	// started again. It is a resource name, never a credential.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	CreateOperation string `json:"createOperation,omitempty"`

	// databaseOperation is the name of the long-running operation creating
	// the run's database or applying the workload's schema to it
	// ("projects/P/instances/I/databases/D/operations/O") while Spanner
	// works on it. The manager polls it on later reconciles instead of
	// waiting for it (a schema change with indexes takes minutes on Cloud
	// Spanner), also after a restart. It is a resource name, never a
	// credential.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	DatabaseOperation string `json:"databaseOperation,omitempty"`

	// created is true when spanbench created the instance for this run
	// (mode Ephemeral): it carries the run's labels and is deleted when the
	// run ends or is deleted.
	// +optional
	Created bool `json:"created,omitempty"`

	// deletionTime is when spanbench deleted the instance it created.
	// +optional
	DeletionTime *metav1.Time `json:"deletionTime,omitempty"`

	// database is the database id.
	// +optional
	// +kubebuilder:validation:MaxLength=30
	Database string `json:"database,omitempty"`

	// dialect is the database's SQL dialect, GoogleSQL or PostgreSQL.
	// +optional
	Dialect Dialect `json:"dialect,omitempty"`

	// splitPoints is how many split points were asked for and added.
	// +optional
	SplitPoints *SplitPointsStatus `json:"splitPoints,omitempty"`
}

// SplitPointsStatus counts the split points of spec.target.splitPoints.
type SplitPointsStatus struct {
	// requested is the number of split points the spec asks for.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Requested int32 `json:"requested,omitempty"`

	// added is the number Spanner accepted; 0 when the step was skipped
	// (see the SplitPointsApplied condition).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Added int32 `json:"added,omitempty"`
}

// DatasetSource says where the run's dataset came from.
// +kubebuilder:validation:Enum=Existing;Loaded;Reloaded
type DatasetSource string

const (
	// DatasetExisting: the database already held the dataset (its marker
	// matched); the run did not load.
	DatasetExisting DatasetSource = "Existing"
	// DatasetLoaded: the run's loader pods loaded the dataset into an
	// empty table.
	DatasetLoaded DatasetSource = "Loaded"
	// DatasetReloaded: another dataset was there and, as
	// spec.workload.dataset.reload allows, it was replaced.
	DatasetReloaded DatasetSource = "Reloaded"
)

// DatasetStatus is the preloaded dataset and the progress of its load.
type DatasetStatus struct {
	// table is the workload's main table, whose rows are counted.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Table string `json:"table,omitempty"`

	// schemaHash identifies the schema: its DDL, its parameters (such as
	// the field size) and the row generator's version, as recorded in the
	// database's dataset marker. Two runs with the same hash and rows ran
	// on the same data.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	SchemaHash string `json:"schemaHash,omitempty"`

	// ddl is the workload's schema, as the statements spanbench applied
	// (or found applied) in the database's dialect.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=4096
	DDL []string `json:"ddl,omitempty"`

	// rows is the number of rows the dataset holds once loaded.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Rows int64 `json:"rows,omitempty"`

	// source is Existing (found loaded, not loaded again), Loaded or
	// Reloaded.
	// +optional
	Source DatasetSource `json:"source,omitempty"`

	// loaded is how many rows this run's loader pods have loaded so far,
	// as they report it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Loaded int64 `json:"loaded,omitempty"`

	// rowsPerSecond is the load's average rate from the start of the
	// Loading stage to the loaders' latest report, as a decimal string such
	// as "12500.0".
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	RowsPerSecond string `json:"rowsPerSecond,omitempty"`

	// retries is how many times the loader Job started a loader pod again
	// after an attempt failed (a crash, an eviction, an OOM kill), summed
	// over the slices. Each retry resumes where every row of its slice was
	// loaded; a LoaderRetried event says where.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Retries int32 `json:"retries,omitempty"`

	// tables are the tables of a dataset with a marker per table (a Custom
	// workload's), parents first, each with what this run did with it: a
	// table whose marker matched is Existing and not written; the loader
	// pods load only the others. Absent for the built-in workloads, whose
	// dataset has one marker.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Tables []DatasetTableStatus `json:"tables,omitempty"`
}

// DatasetTableStatus is one table of a dataset with a marker per table.
type DatasetTableStatus struct {
	// name is the table, as the DDL creates it.
	// +required
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name"`

	// rows is the number of rows the table holds once loaded.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Rows int64 `json:"rows,omitempty"`

	// source is Existing (its marker matched: this run did not write it),
	// Loaded (it had no marker) or Reloaded (it held another dataset, or
	// is interleaved in a table that did, and was replaced).
	// +optional
	Source DatasetSource `json:"source,omitempty"`
}
