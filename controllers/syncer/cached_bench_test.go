package syncer

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/custody-dev/custody/controllers/syncer/packedcache"
)

// cachedShapes are the four kinds of object a syncer caches ten thousand of at ten thousand
// claims, as BenchmarkSteadyState10000Claims' bed makes them (test/e2e/volumes): the hub's
// claims and PVs, the member's copies of the claims and the PVs it provisioned for them.
// NNNN stands for the claim's number, UUUU for a UID's unique part.
var cachedShapes = map[string]string{
	"hub-claim":    `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"annotations":{"finalizers.workload.custody.dev/m1":"storage.custody.dev/hold","storage.custody.dev/domain":"shared"},"creationTimestamp":"2026-11-30T08:59:13Z","finalizers":["kubernetes.io/pvc-protection","storage.custody.dev/volume","workload.custody.dev/syncer-m1"],"labels":{"state.workload.custody.dev/m1":"Sync"},"name":"data-NNNN","namespace":"bench","resourceVersion":"5NNNN","uid":"2972847d-e569-4b3d-9f21-17f5fUUUU"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"storageClassName":"shared","volumeMode":"Filesystem","volumeName":"pvc-2972847d-e569-4b3d-9f21-17f5fUUUU"},"status":{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"},"conditions":[{"lastProbeTime":null,"lastTransitionTime":"2026-11-30T08:59:14Z","message":"No pods are currently referencing this PVC","reason":"NoPodsUsingPVC","status":"True","type":"Unused"}],"phase":"Bound"}}`,
	"hub-pv":       `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"annotations":{"pv.kubernetes.io/provisioned-by":"shared.storage.sim.custody.dev","pv.workload.custody.dev/m1":"pvc-226b204f-6db2-485d-8c7f-77f24UUUU"},"creationTimestamp":"2026-11-30T08:59:14Z","finalizers":["kubernetes.io/pv-protection","workload.custody.dev/syncer-m1"],"labels":{"state.workload.custody.dev/m1":"Sync"},"name":"pvc-2972847d-e569-4b3d-9f21-17f5fUUUU","resourceVersion":"5NNNN","uid":"526af3ae-3a44-46f8-8f34-8fb93UUUU"},"spec":{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"},"claimRef":{"apiVersion":"v1","kind":"PersistentVolumeClaim","name":"data-NNNN","namespace":"bench","uid":"2972847d-e569-4b3d-9f21-17f5fUUUU"},"csi":{"driver":"shared.storage.sim.custody.dev","volumeAttributes":{"domain":"shared"},"volumeHandle":"shared-226b204f-6db2-485d-8c7f-77f24UUUU"},"persistentVolumeReclaimPolicy":"Delete","storageClassName":"shared","volumeMode":"Filesystem"},"status":{"lastPhaseTransitionTime":"2026-11-30T08:59:14Z","phase":"Bound"}}`,
	"member-claim": `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"annotations":{"pv.kubernetes.io/bind-completed":"yes","pv.kubernetes.io/bound-by-controller":"yes","storage.custody.dev/domain":"shared","volume.beta.kubernetes.io/storage-provisioner":"shared.storage.sim.custody.dev","volume.kubernetes.io/storage-provisioner":"shared.storage.sim.custody.dev","workload.custody.dev/applied":"163go9barrfUUUU","workload.custody.dev/hub-name":"data-NNNN","workload.custody.dev/hub-namespace":"bench"},"creationTimestamp":"2026-11-30T08:59:13Z","finalizers":["kubernetes.io/pvc-protection"],"labels":{"workload.custody.dev/hub":"161be665-a590-45d0-b8d5-f8a4500f3d34","workload.custody.dev/sync-target":"m1"},"name":"data-NNNN","namespace":"custody-4v7xcguje1k4tlw1","resourceVersion":"4NNNN","uid":"226b204f-6db2-485d-8c7f-77f24UUUU"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"storageClassName":"shared","volumeMode":"Filesystem","volumeName":"pvc-226b204f-6db2-485d-8c7f-77f24UUUU"},"status":{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"},"conditions":[{"lastProbeTime":null,"lastTransitionTime":"2026-11-30T08:59:14Z","message":"No pods are currently referencing this PVC","reason":"NoPodsUsingPVC","status":"True","type":"Unused"}],"phase":"Bound"}}`,
	"member-pv":    `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"annotations":{"pv.kubernetes.io/provisioned-by":"shared.storage.sim.custody.dev","workload.custody.dev/applied":"4d69srxgk1bUUUU","workload.custody.dev/hub-claim":"bench/data-NNNN","workload.custody.dev/hub-name":"pvc-2972847d-e569-4b3d-9f21-17f5fUUUU","workload.custody.dev/origin":"m1/161be665-a590-45d0-b8d5-f8a4500f3d34"},"creationTimestamp":"2026-11-30T08:59:14Z","finalizers":["kubernetes.io/pv-protection","external-attacher/shared.storage.sim.custody.dev"],"labels":{"workload.custody.dev/hub":"161be665-a590-45d0-b8d5-f8a4500f3d34","workload.custody.dev/sync-target":"m1"},"name":"pvc-226b204f-6db2-485d-8c7f-77f24UUUU","resourceVersion":"4NNNN","uid":"f9df61c4-6aff-4157-bdb0-c5c74UUUU"},"spec":{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"},"claimRef":{"apiVersion":"v1","kind":"PersistentVolumeClaim","name":"data-NNNN","namespace":"custody-4v7xcguje1k4tlw1","uid":"226b204f-6db2-485d-8c7f-77f24UUUU"},"csi":{"driver":"shared.storage.sim.custody.dev","volumeAttributes":{"domain":"shared"},"volumeHandle":"shared-226b204f-6db2-485d-8c7f-77f24UUUU"},"persistentVolumeReclaimPolicy":"Retain","storageClassName":"shared","volumeMode":"Filesystem"},"status":{"lastPhaseTransitionTime":"2026-11-30T08:59:14Z","phase":"Bound"}}`,
}

// cachedObjects decodes n objects of a shape, as an informer does, each with its own name
// and UIDs.
func cachedObjects(shape string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(strings.NewReplacer("NNNN", fmt.Sprintf("%04d", i), "UUUU", fmt.Sprintf("%04x", i)).Replace(shape))
	}
	return out
}

// heldBytes is the heap that the objects decoded from data and transformed hold, per object.
func heldBytes(b *testing.B, data [][]byte, transform toolscache.TransformFunc) float64 {
	held := make([]any, len(data))
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i, d := range data {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(d); err != nil {
			b.Fatal(err)
		}
		obj, err := transform(u)
		if err != nil {
			b.Fatal(err)
		}
		held[i] = obj
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(held)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(len(data))
}

// BenchmarkCachedObjects reports the heap that each cached object holds, in B/object, as
// the syncer's caches keep it (trimCached, then packedcache.Pack) and as an Unstructured
// (trimCached alone), beside its size as JSON; and, per op, what unpacking one for a reader
// costs.
func BenchmarkCachedObjects(b *testing.B) {
	const n = 10000
	for _, name := range []string{"hub-claim", "hub-pv", "member-claim", "member-pv"} {
		b.Run(name, func(b *testing.B) {
			data := cachedObjects(cachedShapes[name], n)
			packed := func(obj any) (any, error) {
				obj, err := trimCached(obj)
				if err != nil {
					return nil, err
				}
				return packedcache.Pack(obj)
			}
			one, err := packed(decoded(b, data[0]))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := one.(*packedcache.Object).Unpack(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(heldBytes(b, data, packed), "packed-B/object")
			b.ReportMetric(heldBytes(b, data, trimCached), "unpacked-B/object")
			b.ReportMetric(float64(len(data[0])), "json-B")
		})
	}
}

func decoded(b *testing.B, data []byte) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		b.Fatal(err)
	}
	return u
}
