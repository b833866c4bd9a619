package storageclass

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func TestCompatible(t *testing.T) {
	ptr := func(c workloadv1alpha1.StorageClassInfo) *workloadv1alpha1.StorageClassInfo { return &c }
	tests := []struct {
		name       string
		from, to   *workloadv1alpha1.StorageClassInfo
		wantOK     bool
		wantReason string
	}{
		{name: "same class", from: ptr(fast()), to: ptr(fast()), wantOK: true},
		{
			name: "settings that do not refuse moves",
			from: ptr(fast()),
			to: ptr(fast(func(c *workloadv1alpha1.StorageClassInfo) {
				c.ReclaimPolicy, c.VolumeBindingMode, c.AllowVolumeExpansion, c.Default = corev1.PersistentVolumeReclaimRetain, "Immediate", false, true
			})),
			wantOK: true,
		},
		{
			name:       "provisioner",
			from:       ptr(fast()),
			to:         ptr(fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Provisioner = "ebs.csi.aws.com" })),
			wantReason: `class "fast" differs in provisioner: "rbd.csi.ceph.com" on the source; "ebs.csi.aws.com" on the target`,
		},
		{
			name:       "parameters",
			from:       ptr(fast()),
			to:         ptr(fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Parameters = map[string]string{"pool": "ssd"} })),
			wantReason: `class "fast" differs in parameters: {clusterID="c1"} on the source; {clusterID unset} on the target`,
		},
		{
			name:       "domain",
			from:       ptr(fast()),
			to:         ptr(fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Domain = "west" })),
			wantReason: `class "fast" differs in domain: "east" on the source; "west" on the target`,
		},
		{
			name: "several fields, refusing ones only",
			from: ptr(fast()),
			to: ptr(fast(func(c *workloadv1alpha1.StorageClassInfo) {
				c.Provisioner, c.Parameters["pool"], c.AllowVolumeExpansion = "other", "hdd", false
			})),
			wantReason: `class "fast" differs in provisioner: "rbd.csi.ceph.com" on the source; "other" on the target; ` +
				`class "fast" differs in parameters: {pool="ssd"} on the source; {pool="hdd"} on the target`,
		},
		{
			name:       "missing on the target",
			from:       ptr(fast()),
			wantReason: `class "fast" is missing on the target (present on the source)`,
		},
		{
			name:       "missing on the source: nothing to check against",
			to:         ptr(fast()),
			wantReason: `class "fast" is missing on the source (present on the target)`,
		},
		{
			// A claim that names no class gets each target's default class.
			name:       "different default classes",
			from:       ptr(fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Default = true })),
			to:         ptr(fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Name, c.Default = "standard", true })),
			wantReason: `class "fast" is missing on the target (present on the source); class "standard" is missing on the source (present on the target)`,
		},
		{
			name:       "reported by neither",
			wantReason: "the class is reported by neither the source nor the target",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, reason := Compatible(tt.from, tt.to)
			if ok != tt.wantOK || reason != tt.wantReason {
				t.Fatalf("Compatible = %v, %q\n          want %v, %q", ok, reason, tt.wantOK, tt.wantReason)
			}
		})
	}
}
