package workload

import (
	"maps"
	"strings"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// Change is what an object's metadata needs to follow its namespace.
type Change struct {
	Labels      map[string]string
	Annotations map[string]string
	// DropAnnotations are deletion annotations left from an earlier removal from a target the
	// object returns to.
	DropAnnotations []string
}

// Empty tells whether the object already follows its namespace.
func (c Change) Empty() bool {
	return len(c.Labels)+len(c.Annotations)+len(c.DropAnnotations) == 0
}

// Propagate computes the change that makes an object follow its namespace: a state label for
// every target the namespace is on (Sync, or "" when coordination decides), and the
// namespace's deletion annotation for every target the namespace leaves.
func Propagate(nsLabels, nsAnnotations, objLabels, objAnnotations map[string]string, coordinated bool) Change {
	c := Change{Labels: map[string]string{}, Annotations: map[string]string{}}
	initial := string(workloadv1alpha1.ResourceStateSync)
	if coordinated {
		initial = string(workloadv1alpha1.ResourceStatePending)
	}
	for k := range nsLabels {
		key, ok := strings.CutPrefix(k, workloadv1alpha1.StateLabelPrefix)
		if !ok {
			continue
		}
		deletion := workloadv1alpha1.DeletionAnnotation(key)
		nsLeaving, objLeaving := nsAnnotations[deletion], objAnnotations[deletion]
		_, objOn := objLabels[k]
		switch {
		case nsLeaving != "" && objOn && objLeaving == "":
			c.Annotations[deletion] = nsLeaving
		case nsLeaving == "" && !objOn:
			c.Labels[k] = initial
			if objLeaving != "" {
				c.DropAnnotations = append(c.DropAnnotations, deletion)
			}
		}
	}
	return c
}

// Apply writes the change into an object's labels and annotations, which may be nil.
func (c Change) Apply(objLabels, objAnnotations map[string]string) (map[string]string, map[string]string) {
	if len(c.Labels) > 0 && objLabels == nil {
		objLabels = map[string]string{}
	}
	if len(c.Annotations) > 0 && objAnnotations == nil {
		objAnnotations = map[string]string{}
	}
	maps.Copy(objLabels, c.Labels)
	maps.Copy(objAnnotations, c.Annotations)
	for _, a := range c.DropAnnotations {
		delete(objAnnotations, a)
	}
	return objLabels, objAnnotations
}
