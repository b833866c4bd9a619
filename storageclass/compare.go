package storageclass

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// Field is a field of a StorageClass in which targets can disagree.
type Field string

// The fields compared, named as in a StorageClass.
const (
	FieldProvisioner          Field = "provisioner"
	FieldParameters           Field = "parameters"
	FieldDomain               Field = "domain"
	FieldReclaimPolicy        Field = "reclaimPolicy"
	FieldVolumeBindingMode    Field = "volumeBindingMode"
	FieldAllowVolumeExpansion Field = "allowVolumeExpansion"
	FieldDefault              Field = "default"
)

// fieldSpec says how a field is compared. value renders the field of a class for a message;
// equal classes render equal values. keys are the parameter keys in which the compared
// classes differ: a parameters value shows only those, so that a message names what differs.
type fieldSpec struct {
	field   Field
	refuses bool
	value   func(c *workloadv1alpha1.StorageClassInfo, keys []string) string
}

// fields are compared in this order, which is also the order of a class's mismatches: those
// that refuse moves first. An empty reclaim policy or binding mode is the API server's
// default, as a StorageClass read back from a member would show it.
var fields = []fieldSpec{
	{FieldProvisioner, true, func(c *workloadv1alpha1.StorageClassInfo, _ []string) string { return strconv.Quote(c.Provisioner) }},
	{FieldParameters, true, func(c *workloadv1alpha1.StorageClassInfo, keys []string) string {
		parts := make([]string, len(keys))
		for i, k := range keys {
			if v, ok := c.Parameters[k]; ok {
				parts[i] = k + "=" + strconv.Quote(v)
			} else {
				parts[i] = k + " unset"
			}
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}},
	{FieldDomain, true, func(c *workloadv1alpha1.StorageClassInfo, _ []string) string { return strconv.Quote(c.Domain) }},
	{FieldReclaimPolicy, false, func(c *workloadv1alpha1.StorageClassInfo, _ []string) string {
		return strconv.Quote(string(cmp.Or(c.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete)))
	}},
	{FieldVolumeBindingMode, false, func(c *workloadv1alpha1.StorageClassInfo, _ []string) string {
		return strconv.Quote(cmp.Or(c.VolumeBindingMode, string(storagev1.VolumeBindingImmediate)))
	}},
	{FieldAllowVolumeExpansion, false, func(c *workloadv1alpha1.StorageClassInfo, _ []string) string {
		return strconv.FormatBool(c.AllowVolumeExpansion)
	}},
	{FieldDefault, false, func(c *workloadv1alpha1.StorageClassInfo, _ []string) string { return strconv.FormatBool(c.Default) }},
}

// RefusesMoves tells whether a difference in the field refuses moving a volume of the class
// between the targets that differ: true for provisioner, parameters and domain.
func (f Field) RefusesMoves() bool {
	return slices.ContainsFunc(fields, func(s fieldSpec) bool { return s.field == f && s.refuses })
}

// Target is what one SyncTarget reports.
type Target struct {
	Name    string
	Classes []workloadv1alpha1.StorageClassInfo
}

// Values is one value of a field and the targets that report it, sorted.
type Values struct {
	Value   string
	Targets []string
}

// Mismatch is one field of one class in which the targets that have the class disagree.
type Mismatch struct {
	Class string
	Field Field
	// Values has one entry per distinct value, in the order of their first target.
	Values []Values
}

// String names the class, the field and each value with its targets.
func (m Mismatch) String() string {
	vs := make([]string, len(m.Values))
	for i, v := range m.Values {
		vs[i] = v.Value + " on " + strings.Join(v.Targets, ", ")
	}
	return fmt.Sprintf("class %q differs in %s: %s", m.Class, m.Field, strings.Join(vs, "; "))
}

// Missing is a class that some targets report and others do not.
type Missing struct {
	Class     string
	MissingOn []string
	PresentOn []string
}

// String names the class and the targets that lack it and have it.
func (m Missing) String() string {
	return fmt.Sprintf("class %q is missing on %s (present on %s)", m.Class,
		strings.Join(m.MissingOn, ", "), strings.Join(m.PresentOn, ", "))
}

// Report is the comparison of the classes of a set of targets.
type Report struct {
	// Targets are the names of the targets compared, sorted.
	Targets []string
	// Classes are the names of every class some target reports, sorted.
	Classes []string
	// Mismatches are sorted by class, then by field: the fields that refuse moves first.
	Mismatches []Mismatch
	// Missing is sorted by class.
	Missing []Missing
	// Defaults groups the targets by the class they mark default, as a quoted name, or
	// "none" for a target without one (several defaults are listed together), in the order of
	// their first target; empty when every target has the same default. A claim that names no
	// class gets a target's default, so its volume cannot move between targets whose defaults
	// differ.
	Defaults []Values
}

// DefaultsDiffer describes the targets' differing default classes, and what that refuses;
// empty when every target has the same default.
func (r Report) DefaultsDiffer() string {
	if len(r.Defaults) == 0 {
		return ""
	}
	vs := make([]string, len(r.Defaults))
	for i, v := range r.Defaults {
		vs[i] = v.Value + " on " + strings.Join(v.Targets, ", ")
	}
	return "the default class differs: " + strings.Join(vs, "; ") + "; volumes of claims that name no class do not move between those targets"
}

// Refusals describes, one line each, what refuses some move among the targets: the
// mismatches in fields that refuse moves, then the missing classes.
func (r Report) Refusals() []string {
	var out []string
	for _, m := range r.Mismatches {
		if m.Field.RefusesMoves() {
			out = append(out, m.String())
		}
	}
	for _, m := range r.Missing {
		out = append(out, m.String())
	}
	return out
}

// Differences describes, one line each, the mismatches that leave moves possible.
func (r Report) Differences() []string {
	var out []string
	for _, m := range r.Mismatches {
		if !m.Field.RefusesMoves() {
			out = append(out, m.String())
		}
	}
	return out
}

// Compare compares the classes the targets report. A class is compared by name: it is
// missing on a target that does not report the name, and its fields are compared among the
// targets that do.
func Compare(targets []Target) Report {
	var r Report
	byClass := map[string]map[string]*workloadv1alpha1.StorageClassInfo{}
	for i := range targets {
		t := &targets[i]
		r.Targets = append(r.Targets, t.Name)
		for j := range t.Classes {
			c := &t.Classes[j]
			if byClass[c.Name] == nil {
				byClass[c.Name] = map[string]*workloadv1alpha1.StorageClassInfo{}
			}
			byClass[c.Name][t.Name] = c
		}
	}
	slices.Sort(r.Targets)
	r.Classes = slices.Sorted(maps.Keys(byClass))
	r.Defaults = defaults(targets)
	for _, class := range r.Classes {
		present := slices.Sorted(maps.Keys(byClass[class]))
		if len(present) < len(r.Targets) {
			missing := slices.DeleteFunc(slices.Clone(r.Targets), func(t string) bool { return slices.Contains(present, t) })
			r.Missing = append(r.Missing, Missing{Class: class, MissingOn: missing, PresentOn: present})
		}
		infos := make([]*workloadv1alpha1.StorageClassInfo, len(present))
		for i, t := range present {
			infos[i] = byClass[class][t]
		}
		keys := differingKeys(infos)
		for _, f := range fields {
			if vs := group(present, infos, f, keys); len(vs) > 1 {
				r.Mismatches = append(r.Mismatches, Mismatch{Class: class, Field: f.field, Values: vs})
			}
		}
	}
	return r
}

// group gathers the targets by their value of the field, in the order of the targets.
func group(targets []string, infos []*workloadv1alpha1.StorageClassInfo, f fieldSpec, keys []string) []Values {
	var out []Values
	for i, t := range targets {
		v := f.value(infos[i], keys)
		if j := slices.IndexFunc(out, func(g Values) bool { return g.Value == v }); j >= 0 {
			out[j].Targets = append(out[j].Targets, t)
		} else {
			out = append(out, Values{Value: v, Targets: []string{t}})
		}
	}
	return out
}

// differingKeys are the parameter keys, sorted, whose value or presence is not the same in
// every class.
func differingKeys(infos []*workloadv1alpha1.StorageClassInfo) []string {
	all := map[string]bool{}
	for _, c := range infos {
		for k := range c.Parameters {
			all[k] = true
		}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(all)) {
		v0, ok0 := infos[0].Parameters[k]
		if slices.ContainsFunc(infos[1:], func(c *workloadv1alpha1.StorageClassInfo) bool {
			v, ok := c.Parameters[k]
			return ok != ok0 || v != v0
		}) {
			out = append(out, k)
		}
	}
	return out
}

// defaults groups the targets by their default classes, in the order of the targets' names;
// nil when they all agree.
func defaults(targets []Target) []Values {
	sorted := slices.SortedFunc(slices.Values(targets), func(a, b Target) int { return cmp.Compare(a.Name, b.Name) })
	var out []Values
	for _, t := range sorted {
		var names []string
		for _, c := range t.Classes {
			if c.Default {
				names = append(names, strconv.Quote(c.Name))
			}
		}
		slices.Sort(names)
		v := cmp.Or(strings.Join(names, ", "), "none")
		if j := slices.IndexFunc(out, func(g Values) bool { return g.Value == v }); j >= 0 {
			out[j].Targets = append(out[j].Targets, t.Name)
		} else {
			out = append(out, Values{Value: v, Targets: []string{t.Name}})
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}
