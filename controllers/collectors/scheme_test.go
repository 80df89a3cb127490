package collectors_test

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// scheme is the fake clients' scheme: the API's types.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()
