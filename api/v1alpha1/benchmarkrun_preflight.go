package v1alpha1

// ConditionPreflight is the preflight of real Cloud Spanner access, the
// first stage of a run the manager runs it for (its --preflight flag):
// whose credentials the manager uses, the IAM permissions the run needs
// on its project, instance and database, the instance configuration and
// the node quota, asked before anything is created. Unknown (reason
// Checking) while the checks run, or (Retrying) while the checks Google
// did not answer are asked again, until the prepare stage's deadline; True when they passed (Passed) or do
// not apply (SkippedOnEmulator); False (PreflightFailed) when one failed,
// the message naming each missing permission with the role that grants
// it. A False preflight fails the run (Succeeded=False, reason
// PreflightFailed) before any instance, database, Job or Role exists.
// Absent when the manager does not run the preflight.
const ConditionPreflight = "Preflight"

// Reasons of Preflight.
const (
	// ReasonPreflightChecking: the checks are under way.
	ReasonPreflightChecking = "Checking"
	// ReasonPreflightRetrying: Google did not answer a check (Unavailable,
	// DeadlineExceeded, ResourceExhausted) and none refused: the checks
	// are asked again, with a growing wait, until the prepare stage's
	// deadline; the message carries the error.
	ReasonPreflightRetrying = "Retrying"
	// ReasonPreflightPassed: every check passed; the message names whose
	// credentials were checked and where.
	ReasonPreflightPassed = "Passed"
	// ReasonPreflightSkippedOnEmulator: the target is the emulator, which
	// has no IAM, credentials or quota to check.
	ReasonPreflightSkippedOnEmulator = "SkippedOnEmulator"
	// ReasonPreflightFailed: a check failed; also the reason of the run's
	// Succeeded=False.
	ReasonPreflightFailed = "PreflightFailed"
)
