package preflight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"cloud.google.com/go/auth/credentials"
	"cloud.google.com/go/compute/metadata"
)

// Credentials are what the checks' clients authenticate with, as far as
// the report needs to name whose they are. They are never printed: only
// the identity read from them is.
type Credentials struct {
	// JSON is a credentials file's content (a service-account key, a
	// user's or a workload identity federation configuration); nil when
	// the identity comes from the metadata server.
	JSON []byte
	// Source says where they were found, for the report (a file's path,
	// "Application Default Credentials"); never their content.
	Source string
	// MetadataEmail asks the metadata server for the email of the
	// service account the process runs as (GKE Workload Identity, a VM's
	// account); used when JSON is nil. Nil: not on Google Cloud.
	MetadataEmail func(ctx context.Context) (string, error)
}

// DetectCredentials finds Application Default Credentials the way the
// Go clients do (GOOGLE_APPLICATION_CREDENTIALS, gcloud's well-known file,
// the metadata server), at the edge of a process that will use them.
func DetectCredentials() (Credentials, error) {
	c, err := credentials.DetectDefault(&credentials.DetectOptions{Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"}})
	if err != nil {
		return Credentials{}, err
	}
	if js := c.JSON(); js != nil {
		return Credentials{JSON: js, Source: "Application Default Credentials"}, nil
	}
	md := metadata.NewClient(nil)
	return Credentials{Source: "the metadata server", MetadataEmail: func(ctx context.Context) (string, error) {
		return md.EmailWithContext(ctx, "default")
	}}, nil
}

// Identity is whose credentials the checks run with.
type Identity struct {
	// Kind is the credentials' kind: service_account, authorized_user,
	// external_account, impersonated_service_account, or metadata.
	Kind string
	// Principal is the email the permissions are granted to, "" when the
	// credentials do not name it (a user's credentials file).
	Principal string
	// Source is Credentials.Source.
	Source string
}

func (id Identity) String() string {
	who := id.Principal
	if who == "" {
		who = "an account the credentials do not name"
	}
	return fmt.Sprintf("%s (%s, from %s)", who, id.Kind, id.Source)
}

// errNoCredentials: neither a file nor the metadata server.
var errNoCredentials = errors.New("no credentials found: give a service-account key (--credentials), " +
	"set GOOGLE_APPLICATION_CREDENTIALS, run `gcloud auth application-default login`, or run on Google Cloud with Workload Identity")

// identify reads whose c are. Errors never quote the file: it may hold a
// private key.
func identify(ctx context.Context, c Credentials) (Identity, error) {
	if c.JSON == nil {
		if c.MetadataEmail == nil {
			return Identity{}, errNoCredentials
		}
		email, err := c.MetadataEmail(ctx)
		if err != nil {
			return Identity{}, fmt.Errorf("the metadata server did not name the service account: %w", err)
		}
		return Identity{Kind: "metadata", Principal: email, Source: c.Source}, nil
	}
	var f struct {
		Type                           string `json:"type"`
		ClientEmail                    string `json:"client_email"`
		Account                        string `json:"account"`
		ServiceAccountImpersonationURL string `json:"service_account_impersonation_url"`
	}
	if err := json.Unmarshal(c.JSON, &f); err != nil {
		return Identity{}, fmt.Errorf("the credentials from %s are not a JSON credentials file", c.Source)
	}
	id := Identity{Kind: f.Type, Source: c.Source}
	switch f.Type {
	case "service_account":
		id.Principal = f.ClientEmail
	case "authorized_user":
		id.Principal = f.Account
	case "external_account", "impersonated_service_account":
		id.Principal = impersonated(f.ServiceAccountImpersonationURL)
	default:
		return Identity{}, fmt.Errorf("the credentials from %s are of an unknown type %q", c.Source, f.Type)
	}
	if f.Type == "service_account" && id.Principal == "" {
		return Identity{}, fmt.Errorf("the service-account key from %s names no client_email", c.Source)
	}
	return id, nil
}

// impersonated is the service account of an impersonation URL
// (…/serviceAccounts/EMAIL:generateAccessToken), "" if it names none.
func impersonated(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	_, rest, ok := strings.Cut(p.Path, "/serviceAccounts/")
	if !ok {
		return ""
	}
	email, _, _ := strings.Cut(rest, ":")
	return email
}
