package v1alpha1

// ConditionConsistencyChecked records the TPC-C consistency conditions the
// manager checks against the database after a TPCC run whose spec asks for
// them (spec.workload.tpcc.consistencyChecks). True with
// ReasonConsistencyPassed when every condition held; False with
// ReasonConsistencyFailed, naming the failed conditions, when one did not:
// the run lost or duplicated work, so the run fails too (Succeeded False
// with the same reason) and its figures are not a result; False with
// ReasonConsistencySkipped when the conditions could not be checked (the
// database could not be read in time), which leaves the run's outcome as
// it was. While the manager checks, in the background, the run stays
// Aggregating and the condition is Unknown with ReasonConsistencyChecking.
const ConditionConsistencyChecked = "ConsistencyChecked"

// Reasons of ConditionConsistencyChecked.
const (
	// ReasonConsistencyPassed: every consistency condition held.
	ReasonConsistencyPassed = "Passed"
	// ReasonConsistencyFailed: a condition did not hold; the message names
	// it and where. Also the reason of the run's Succeeded False.
	ReasonConsistencyFailed = "ConsistencyFailed"
	// ReasonConsistencySkipped: the conditions were not checked; the
	// message says why.
	ReasonConsistencySkipped = "Skipped"
	// ReasonConsistencyChecking: the check is under way; a manager that
	// restarted meanwhile checks again, and the message says so.
	ReasonConsistencyChecking = "Checking"
)

// TPCCStatus is a TPC-C run's headline figures.
type TPCCStatus struct {
	// tpmC is the New-Order transactions completed per minute after the
	// warm-up across all runners, as a decimal string with one fractional
	// digit, such as "1523.0".
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	TpmC string `json:"tpmC,omitempty"`

	// committedTpmC is tpmC without the New-Orders rolled back by design
	// (the specification's 1 % with an unused item), in the same form:
	// the committed New-Orders per minute after the warm-up.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	CommittedTpmC string `json:"committedTpmC,omitempty"`

	// mix is each transaction type's share of the transactions completed
	// after the warm-up, in the specification's order.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=5
	Mix []TPCCShareStatus `json:"mix,omitempty"`

	// checks are the consistency conditions checked after the run
	// (condition ConsistencyChecked), each passed or failed.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Checks []TPCCCheckStatus `json:"checks,omitempty"`
}

// TPCCShareStatus is one transaction type's part of the executed mix.
type TPCCShareStatus struct {
	// type is the transaction's operation type, such as NewOrder.
	// +required
	Type OperationType `json:"type"`

	// completed counts its successful transactions after the warm-up.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Completed int64 `json:"completed,omitempty"`

	// percent is completed's share of all completed transactions, as a
	// decimal string with one fractional digit, such as "45.1".
	// +optional
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:Pattern=`^[0-9]+([.][0-9]+)?$`
	Percent string `json:"percent,omitempty"`
}

// TPCCCheckStatus is one consistency condition and whether it held.
type TPCCCheckStatus struct {
	// name is the condition, such as "W_YTD = sum(D_YTD)".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=80
	Name string `json:"name"`

	// passed is true when the condition held in every warehouse and
	// district.
	// +required
	Passed bool `json:"passed"`

	// detail says where it failed (the first few places).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Detail string `json:"detail,omitempty"`
}
