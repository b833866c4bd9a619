package transform

import (
	"crypto/sha256"
	"encoding/json"
	"maps"
	"math/big"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// UpToDate tells whether the downstream object current already is what desired asks for:
// the syncer applied this very desired state (so nothing was removed upstream since), and
// every field of it still holds (so nobody changed it downstream).
func UpToDate(current, desired *unstructured.Unstructured) bool {
	return current.GetAnnotations()[AppliedAnnotation] == desired.GetAnnotations()[AppliedAnnotation] &&
		Contains(current.Object, desired.Object)
}

// Contains tells whether have holds every field of want with the same value. Maps in have
// may hold more keys, and list items more fields, as an API server's defaulting adds them;
// lists must be as long. An empty or null field in want matches an absent one.
func Contains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return have == nil && len(w) == 0
		}
		for k, wv := range w {
			hv, ok := h[k]
			if !ok {
				if !empty(wv) {
					return false
				}
				continue
			}
			if !Contains(hv, wv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok {
			return have == nil && len(w) == 0
		}
		if len(h) != len(w) {
			return false
		}
		for i := range w {
			if !Contains(h[i], w[i]) {
				return false
			}
		}
		return true
	case nil:
		return empty(have)
	default:
		if hf, ok := number(have); ok {
			wf, ok := number(want)
			return ok && hf == wf
		}
		return have == want
	}
}

// SameStatus tells whether a status reported from a member says what the hub object's says
// already: equal but for the times of conditions that kept their status, reason and message.
// A condition's time is its member's: a claim's new owner reports it Unused since its copy
// came up, which the hub, where it was unused before, need not hear again.
func SameStatus(hub, member any) bool {
	return equality.Semantic.DeepEqual(withoutConditionTimes(hub), withoutConditionTimes(member))
}

// withoutConditionTimes is a status with its conditions' lastTransitionTime and
// lastProbeTime left out.
func withoutConditionTimes(status any) any {
	m, ok := status.(map[string]any)
	if !ok {
		return status
	}
	conditions, ok := m["conditions"].([]any)
	if !ok {
		return status
	}
	out := maps.Clone(m)
	stripped := make([]any, len(conditions))
	for i, c := range conditions {
		if cm, ok := c.(map[string]any); ok {
			cm = maps.Clone(cm)
			delete(cm, "lastTransitionTime")
			delete(cm, "lastProbeTime")
			c = cm
		}
		stripped[i] = c
	}
	out["conditions"] = stripped
	return out
}

// WithoutCondition is the status without its condition of the type given, and whether it
// had one.
func WithoutCondition(status any, conditionType string) (rest any, had bool) {
	m, ok := status.(map[string]any)
	if !ok {
		return status, false
	}
	conditions, _ := m["conditions"].([]any)
	kept := make([]any, 0, len(conditions))
	for _, c := range conditions {
		if cm, ok := c.(map[string]any); ok && cm["type"] == conditionType {
			had = true
			continue
		}
		kept = append(kept, c)
	}
	if !had {
		return status, false
	}
	out := maps.Clone(m)
	if len(kept) == 0 {
		delete(out, "conditions")
	} else {
		out["conditions"] = kept
	}
	return out, true
}

// empty tells whether a value is null, an empty string, map or list: what an API server
// leaves out of an object.
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	case string:
		return v == ""
	}
	return false
}

// number reads the numeric types that decoded JSON and converted objects hold.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// hash is a short digest of a JSON object; encoding/json sorts map keys, so equal objects
// give equal hashes.
func hash(obj map[string]any) string {
	data, err := json.Marshal(obj)
	if err != nil {
		// Unstructured content is JSON by construction; a failure here is a bug upstream of us,
		// and an empty hash only makes the next comparison apply again.
		return ""
	}
	sum := sha256.Sum256(data)
	return new(big.Int).SetBytes(sum[:]).Text(36)[:16]
}
