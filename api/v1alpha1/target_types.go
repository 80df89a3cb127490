package v1alpha1

// InstanceMode says whether spanbench creates the instance or uses one that
// exists.
// +kubebuilder:validation:Enum=Existing;Ephemeral;""
type InstanceMode string

const (
	// InstanceExisting uses the instance as it is and never modifies it.
	InstanceExisting InstanceMode = "Existing"
	// InstanceEphemeral creates the instance for the run and deletes it when
	// the run ends or is deleted.
	InstanceEphemeral InstanceMode = "Ephemeral"
)

// Dialect is the database's SQL dialect. Both built-in workloads speak
// both, with the same table and column names.
// +kubebuilder:validation:Enum=GoogleSQL;PostgreSQL;""
type Dialect string

const (
	// DialectGoogleSQL is GoogleSQL, Spanner's own dialect and the default.
	DialectGoogleSQL Dialect = "GoogleSQL"
	// DialectPostgreSQL is Spanner's PostgreSQL interface: the database is
	// created with the PostgreSQL dialect, and the workload's DDL, queries
	// and DML are written in PostgreSQL.
	DialectPostgreSQL Dialect = "PostgreSQL"
)

// TargetSpec is the Spanner database a run benchmarks.
type TargetSpec struct {
	// project is the Google Cloud project holding the instance. Against the
	// emulator any name serves.
	// +required
	// +kubebuilder:validation:MinLength=6
	// +kubebuilder:validation:MaxLength=30
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9-]*[a-z0-9]$`
	Project string `json:"project"`

	// instance is the Spanner instance.
	// +required
	Instance InstanceSpec `json:"instance"`

	// database is the database id within the instance.
	// +required
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=30
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9_-]*[a-z0-9]$`
	Database string `json:"database"`

	// dialect is the database's SQL dialect: GoogleSQL (default) or
	// PostgreSQL. A missing database is created in this dialect and the
	// workload's schema, queries and DML are written in it; both built-in
	// workloads speak both. An existing database of the other dialect is
	// refused (reason DialectMismatch), never converted.
	// +optional
	Dialect Dialect `json:"dialect,omitempty"`

	// emulatorHost is the host:port of a Cloud Spanner emulator, such as
	// spanner-emulator.spanbench-system:9010 or [::1]:9010. When set,
	// every call goes there, without credentials, and the engine adapts to
	// the emulator's limits (serialised read-write transactions).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9]([-A-Za-z0-9_]*[A-Za-z0-9])?([.][A-Za-z0-9]([-A-Za-z0-9_]*[A-Za-z0-9])?)*|[[][0-9A-Fa-f:.]+[]]):([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?$`
	EmulatorHost string `json:"emulatorHost,omitempty"`

	// credentials is a Secret holding a service-account key that the
	// runner pods use for their data calls. The manager makes the admin
	// calls with its own Application Default Credentials (Workload Identity
	// on GKE) and never reads this Secret. Absent means the runners use
	// Application Default Credentials too.
	// +optional
	Credentials *CredentialsSpec `json:"credentials,omitempty"`

	// splitPoints pre-split the workload's main table with the database
	// admin API's AddSplitPoints before the dataset is loaded, as on a
	// warmed-up database. Where the API is not available (the emulator) the
	// step is skipped and the SplitPointsApplied condition says why.
	// +optional
	SplitPoints *SplitPointsSpec `json:"splitPoints,omitempty"`
}

// SplitPointsSpec chooses the split points of the workload's main table:
// explicit keys, or a count of evenly spaced ones.
// +kubebuilder:validation:XValidation:rule="has(self.keys) != has(self.count)",message="splitPoints: set keys or count, not both"
type SplitPointsSpec struct {
	// keys are split points: values of the main table's primary key, a
	// string for both built-in workloads (YCSB usertable.id, Tweet.Id),
	// such as "40000000".
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	Keys []string `json:"keys,omitempty"`

	// count generates this many split points, evenly spaced over the
	// workload's key space (both built-in workloads spread their keys
	// uniformly). Spanner's guidance is about 10 per node.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Count *int32 `json:"count,omitempty"`
}

// Edition is a Spanner edition. Multi-region configurations need
// EnterprisePlus.
// +kubebuilder:validation:Enum=Standard;Enterprise;EnterprisePlus;""
type Edition string

const (
	// EditionStandard is the Standard edition.
	EditionStandard Edition = "Standard"
	// EditionEnterprise is the Enterprise edition.
	EditionEnterprise Edition = "Enterprise"
	// EditionEnterprisePlus is the Enterprise Plus edition.
	EditionEnterprisePlus Edition = "EnterprisePlus"
)

// InstanceSpec is a Spanner instance and, for ephemeral instances, how to
// create it.
// +kubebuilder:validation:XValidation:rule="!(has(self.nodes) && has(self.processingUnits))",message="instance: set nodes or processingUnits, not both",fieldPath=".processingUnits"
// +kubebuilder:validation:XValidation:rule="!has(self.mode) || self.mode != 'Ephemeral' || (has(self.config) && (has(self.nodes) || has(self.processingUnits)))",message="instance: an Ephemeral instance needs config and nodes or processingUnits"
// +kubebuilder:validation:XValidation:rule="!has(self.processingUnits) || (self.processingUnits < 1000 ? self.processingUnits % 100 == 0 : self.processingUnits % 1000 == 0)",message="instance.processingUnits: must be a multiple of 100 below 1000 and of 1000 from 1000",fieldPath=".processingUnits"
type InstanceSpec struct {
	// name is the instance id.
	// +required
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9-]*[a-z0-9]$`
	Name string `json:"name"`

	// mode is Existing (default: use the instance as it is, never modify
	// it) or Ephemeral (create it for the run, labelled with the run, and
	// delete it when the run ends or is deleted). An Ephemeral instance's id
	// is name: when an instance of that name exists, it is used only if its
	// labels name this run (a restarted manager), and refused otherwise.
	// +optional
	Mode InstanceMode `json:"mode,omitempty"`

	// config is the instance configuration's ID, such as
	// regional-asia-northeast1, asia1 or custom-my-config, always in the
	// target's project: a full resource name
	// (projects/P/instanceConfigs/ID) is refused, so that an allowlist of
	// configurations compares the whole name. Required for Ephemeral.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^([a-z]([-a-z0-9]*[a-z0-9])?)?$`
	Config string `json:"config,omitempty"`

	// nodes is the instance's node count (1 node = 1000 processing units).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Nodes *int32 `json:"nodes,omitempty"`

	// processingUnits is the instance's compute capacity in processing
	// units (1 node = 1000).
	// +optional
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=1000000
	ProcessingUnits *int32 `json:"processingUnits,omitempty"`

	// edition is the Ephemeral instance's edition: Standard, Enterprise or
	// EnterprisePlus. Absent leaves the configuration's default. Ignored for
	// Existing instances, whose edition is recorded in status.target.
	// +optional
	Edition Edition `json:"edition,omitempty"`
}

// CredentialsSpec references a Secret holding a service-account key.
type CredentialsSpec struct {
	// secretName is a Secret in the run's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	SecretName string `json:"secretName"`

	// key is the Secret's key holding the JSON key file: letters, digits,
	// '-', '_' and '.', not "." nor starting with "..". Default key.json.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^(([.][-_A-Za-z0-9]|[-_A-Za-z0-9])[-._A-Za-z0-9]*)?$`
	Key string `json:"key,omitempty"`
}
