package dr

import (
	"testing"

	"k8s.io/utils/ptr"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

func TestClassAt(t *testing.T) {
	p := Pair{Primary: "east", Secondary: "west", Classes: []schedulingv1alpha1.StorageClassMapping{
		{Primary: "gold", Secondary: "silver"}, {Primary: "silver", Secondary: "gold"}, {Primary: "fast", Secondary: "ssd"}}}
	for _, tc := range []struct {
		name     string
		class    *string
		to, want string
	}{
		{"a class of the primary maps to its class at the secondary", ptr.To("fast"), "west", "ssd"},
		{"and back", ptr.To("ssd"), "east", "fast"},
		{"a map may swap two names: the class at the Location the volume leaves decides", ptr.To("gold"), "west", "silver"},
		{"swapped back", ptr.To("silver"), "east", "gold"},
		{"a class of the secondary does not map towards the secondary", ptr.To("ssd"), "west", "ssd"},
		{"a class not in the map keeps its name", ptr.To("bronze"), "west", "bronze"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expect(t, *p.ClassAt(tc.class, tc.to), tc.want)
		})
	}
	t.Run("the default class stays the default class", func(t *testing.T) {
		expect(t, p.ClassAt(nil, "west") == nil, true)
	})
}
