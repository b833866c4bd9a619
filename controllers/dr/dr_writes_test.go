package dr

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestClearStatusKeepsTheCollisionCount(t *testing.T) {
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop"},
		Status: appsv1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1, CurrentRevision: "db-7c", CollisionCount: ptr.To[int32](0)}}
	patch, err := clearStatus(set)
	if err != nil {
		t.Fatal(err)
	}
	data, err := patch.Data(set)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if _, kept := got["status"]["collisionCount"]; kept {
		t.Fatalf("the patch %s writes the collisionCount, which the API server refuses to see decremented", data)
	}
	for _, field := range []string{"replicas", "readyReplicas", "currentRevision"} {
		if v, ok := got["status"][field]; !ok || v != nil {
			t.Fatalf("the patch %s does not clear %s", data, field)
		}
	}
}
