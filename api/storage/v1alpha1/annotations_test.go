package v1alpha1

import "testing"

func TestRestoreFrom(t *testing.T) {
	for _, tc := range []struct {
		name, annotation                         string
		target, snapshot, namespace, replicaName string
	}{
		{name: "own namespace", annotation: "t1/volsync-data-dst-1",
			target: "t1", snapshot: "volsync-data-dst-1", replicaName: "volsync-data-dst-1"},
		{name: "another namespace", annotation: "t1/shop/volsync-data-dst-1",
			target: "t1", snapshot: "shop/volsync-data-dst-1", namespace: "shop", replicaName: "volsync-data-dst-1"},
		{name: "no replica found", annotation: "t1/", target: "t1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, snapshot, asked := RestoreFrom(map[string]string{RestoreAnnotation: tc.annotation})
			if !asked || target != tc.target || snapshot != tc.snapshot {
				t.Fatalf("RestoreFrom(%q) = %q, %q, %v; want %q, %q, true", tc.annotation, target, snapshot, asked, tc.target, tc.snapshot)
			}
			if ns, name := ReplicaIn(snapshot); ns != tc.namespace || name != tc.replicaName {
				t.Errorf("ReplicaIn(%q) = %q, %q; want %q, %q", snapshot, ns, name, tc.namespace, tc.replicaName)
			}
		})
	}
	if _, _, asked := RestoreFrom(nil); asked {
		t.Error("a claim without the annotation asks for a restore")
	}
}
