package packedcache

import (
	"encoding/binary"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestWords checks that the fields, labels and low-valued values of objects are packed as
// words shared by every object, and that the values unique to an object never become words:
// the words stay as many as the objects' shapes, whatever the number of objects.
func TestWords(t *testing.T) {
	first := packed(t, claim(t))
	known := wordCount()
	for i := range 100 {
		u := claim(t)
		n := strings.Repeat("x", i)
		u.SetName("data-" + n)
		u.SetUID(types.UID("uid-" + n))
		u.SetResourceVersion("1" + n)
		u.Object["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["lastProbeTime"] = "2026-12-02T" + n
		o := packed(t, u)
		if got, err := o.Unpack(); err != nil || got.GetName() != u.GetName() || got.GetLabels()["app"] != "db" {
			t.Fatalf("unpacked %v, %v", got, err)
		}
	}
	if got := wordCount(); got != known {
		t.Errorf("%d words after packing 100 claims of the shape of the first, want %d", got, known)
	}
	for _, s := range []string{"metadata", "PersistentVolumeClaim", "kubernetes.io/pvc-protection", "db", "Bound", "team-a"} {
		if _, ok := words.number[s]; !ok || strings.Contains(first.body, s) {
			t.Errorf("%q is not packed as a word in the claim", s)
		}
	}
	for _, s := range []string{"data", "u-1", "42", "2026-11-30T08:59:13Z"} {
		if _, ok := words.number[s]; ok {
			t.Errorf("%q, unique to the claim, is a word", s)
		}
	}

	bad := *first
	bad.body = string(binary.AppendUvarint([]byte{tagString}, (maxWords-1)<<1|1))
	if _, err := bad.Unpack(); err == nil || !strings.Contains(err.Error(), "no word") {
		t.Errorf("unpacking a word that is not: %v", err)
	}
}

func wordCount() int {
	words.Lock()
	defer words.Unlock()
	return len(words.number)
}
