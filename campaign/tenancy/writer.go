package tenancy

import (
	"encoding/json"
	"errors"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
)

// WriterAnnotation records, on a BenchmarkCampaign, who last wrote its
// spec: {"username":…,"uid":…,"groups":[…]}. The campaign's mutating
// webhook stamps it on every write that creates the campaign or changes
// its spec (and puts back the stored one on a write that changes only it);
// the validating webhook refuses any other value, so no user can forge
// it. The campaign controller checks the runs it creates against it.
//
// The authenticator's extra information is not recorded: it may carry
// credential assertions that readers of the campaign must not see, and
// RBAC, which the SubjectAccessReviews ask, never reads it.
const WriterAnnotation = "bench.spanbench.io/spec-writer"

// Stamp is the annotation's value for u.
func Stamp(u authenticationv1.UserInfo) string {
	b, _ := json.Marshal(User{Username: u.Username, UID: u.UID, Groups: u.Groups}) // strings only: never fails
	return string(b)
}

// Writer is the user recorded in annotations, or an error saying why
// there is none.
func Writer(annotations map[string]string) (User, error) {
	raw, ok := annotations[WriterAnnotation]
	if !ok {
		return User{}, fmt.Errorf("the campaign has no %s annotation: it was written before spanbench recorded writers, or without its webhook; write its spec again to record you", WriterAnnotation)
	}
	var u User
	if err := json.Unmarshal([]byte(raw), &u); err != nil {
		return User{}, fmt.Errorf("annotation %s: %w", WriterAnnotation, err)
	}
	if u.Username == "" {
		return User{}, errors.New("annotation " + WriterAnnotation + " names no user")
	}
	return u, nil
}
