package api

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

var builder = runtime.NewSchemeBuilder(
	workloadv1alpha1.AddToScheme,
	schedulingv1alpha1.AddToScheme,
	storagev1alpha1.AddToScheme,
)

// AddToScheme registers every Custody API group.
var AddToScheme = builder.AddToScheme

// NewScheme returns a scheme with Kubernetes' own types and Custody's.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(AddToScheme(s))
	return s
}
