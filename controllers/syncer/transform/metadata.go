package transform

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Annotation is one annotation of obj. Unstructured's GetAnnotations copies the whole map on
// each call; the syncer's checks run over every cached claim and PV on each heartbeat, so
// they read the one key in place.
func Annotation(obj metav1.Object, key string) (string, bool) {
	return metadataEntry(obj, "annotations", key, metav1.Object.GetAnnotations)
}

// Label is one label of obj, read in place as Annotation reads.
func Label(obj metav1.Object, key string) (string, bool) {
	return metadataEntry(obj, "labels", key, metav1.Object.GetLabels)
}

// entryReader is an object that reads one entry of its labels or annotations in place, as
// the packed objects of the syncer's caches do (packedcache.Object).
type entryReader interface {
	MetadataEntry(field, key string) (string, bool)
}

func metadataEntry(obj metav1.Object, field, key string, all func(metav1.Object) map[string]string) (string, bool) {
	if r, ok := obj.(entryReader); ok {
		return r.MetadataEntry(field, key)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		v, ok := all(obj)[key]
		return v, ok
	}
	meta, _ := u.Object["metadata"].(map[string]any)
	entries, _ := meta[field].(map[string]any)
	v, ok := entries[key]
	if !ok {
		return "", false
	}
	s, _ := v.(string)
	return s, true
}
