package syncer

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
)

// trimCached is the transform of every object the syncer caches, from the hub and from the
// member, before it is packed (packedcache). It drops what no decision of the syncer reads:
// the managed fields (its writes are applies, and updates that leave the managed fields as
// the API server has them) and kubectl's copy of the last applied object, as large as the
// object itself, which is not copied across either (package transform).
func trimCached(obj any) (any, error) {
	if o, err := meta.Accessor(obj); err == nil {
		o.SetManagedFields(nil)
		if a := o.GetAnnotations(); a != nil {
			if _, ok := a[corev1.LastAppliedConfigAnnotation]; ok {
				delete(a, corev1.LastAppliedConfigAnnotation)
				o.SetAnnotations(a)
			}
		}
	}
	return obj, nil
}

var _ toolscache.TransformFunc = trimCached
