package tenancy

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// User is who a check is for: the identity the API server authenticated.
type User struct {
	// Username, UID and Groups as the API server reports them.
	Username string   `json:"username"`
	UID      string   `json:"uid,omitempty"`
	Groups   []string `json:"groups,omitempty"`
	// Extra is the authenticator's extra information. The admission
	// request's is used; a recorded writer has none (writer.go).
	Extra map[string][]string `json:"-"`
}

// Reviewer asks the API server's authorizer what a user may do, with a
// SubjectAccessReview per question: the same answer the tenancy policy's
// authorizer checks and `kubectl auth can-i --as` give.
type Reviewer struct {
	// Client creates the SubjectAccessReviews; its identity needs create
	// on subjectaccessreviews.authorization.k8s.io.
	Client client.Client
}

// Refusal is a guarded change the writer lacks every power for.
type Refusal struct {
	Change Change
	User   string
	NS     string
}

// Error says the field, the value, the user and the permissions of which
// the user has none.
func (r *Refusal) Error() string {
	powers := make([]string, len(r.Change.AnyOf))
	for i, p := range r.Change.AnyOf {
		powers[i] = p.Describe(r.NS)
	}
	return fmt.Sprintf("%s %q: user %s lacks the permission it needs: %s", r.Change.Field, r.Change.Value, r.User, strings.Join(powers, " or "))
}

// Check returns the first of changes for which u holds none of the
// powers in namespace ns, or nil when u may make them all. answers caches
// the API server's answers across calls of one admission or pass (nil:
// none kept).
func (r Reviewer) Check(ctx context.Context, u User, ns string, changes []Change, answers map[Power]bool) (*Refusal, error) {
	if answers == nil {
		answers = map[Power]bool{}
	}
	for _, c := range changes {
		ok := false
		for _, p := range c.AnyOf {
			allowed, known := answers[p]
			if !known {
				var err error
				if allowed, err = r.allowed(ctx, u, ns, p); err != nil {
					return nil, err
				}
				answers[p] = allowed
			}
			if allowed {
				ok = true
				break
			}
		}
		if !ok {
			return &Refusal{Change: c, User: u.Username, NS: ns}, nil
		}
	}
	return nil, nil
}

func (r Reviewer) allowed(ctx context.Context, u User, ns string, p Power) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra(u.Extra),
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: p.Verb, Resource: p.Resource, Name: p.Name},
	}}
	if err := r.Client.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("asking the API server whether user %s may %s: %w", u.Username, p.Describe(ns), err)
	}
	return sar.Status.Allowed, nil
}

func extra(in map[string][]string) map[string]authorizationv1.ExtraValue {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]authorizationv1.ExtraValue, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
